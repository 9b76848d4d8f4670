// The sample shop's page script: lists the first items of GET /catalog.
// It is larger than 1 KiB on purpose, so the static tree keeps a gzipped copy of it
// (compressMinBytes defaults to 1024) and sends that copy to browsers that take gzip.
'use strict';

/**
 * Formats a price in cents (or units) for display; the catalog's unit prices are numbers.
 * @param {number} value
 * @returns {string}
 */
function formatPrice(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '';
  return value.toFixed(2);
}

/**
 * Builds one list item for a catalog entry, whatever fields it carries.
 * @param {Record<string, unknown>} item
 * @returns {HTMLLIElement}
 */
function itemView(item) {
  const li = document.createElement('li');
  const name = document.createElement('strong');
  name.textContent = String(item.name ?? item.sku ?? 'item');
  li.appendChild(name);
  if (item.sku !== undefined) {
    const sku = document.createElement('div');
    sku.textContent = 'sku ' + String(item.sku);
    li.appendChild(sku);
  }
  const price = formatPrice(item.price ?? item.unitPrice);
  if (price !== '') {
    const p = document.createElement('div');
    p.textContent = price;
    li.appendChild(p);
  }
  return li;
}

/**
 * Loads the catalog and shows its first twenty entries; shows the failure message otherwise
 * (every failure of the shop has the body { error, status }).
 */
async function showCatalog() {
  const section = document.getElementById('catalog');
  if (section === null) return;
  try {
    const res = await fetch('/catalog', { headers: { accept: 'application/json' } });
    if (!res.ok) {
      const failure = await res.json().catch(() => ({ error: res.statusText }));
      section.textContent = 'catalog unavailable: ' + failure.error;
      return;
    }
    const items = await res.json();
    const list = document.createElement('ul');
    for (const item of items.slice(0, 20)) list.appendChild(itemView(item));
    section.replaceChildren(list);
  } catch (err) {
    section.textContent = 'catalog unavailable: ' + (err instanceof Error ? err.message : String(err));
  }
}

document.addEventListener('DOMContentLoaded', () => {
  void showCatalog();
});
