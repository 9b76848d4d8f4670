import type { Services } from '../route/extensions';

/** How a Refusal names what a parameter asked for: a class by its name, a key by its own name. */
export function keyName(key: unknown): string {
  if (typeof key === 'function') return key.name || 'anonymous';
  return describe(key) ?? String(key);
}

/** `OpenTarget "bank"`, `OpenSpace "orders"`, `Db`: the instance's class, and its name when it has one. */
function describe(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as { name?: unknown; space?: { name?: unknown } };
  const own =
    typeof v.name === 'string' ? v.name : typeof v.space?.name === 'string' ? v.space.name : null;
  const cls =
    (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor
      ?.name || 'Object';
  return own === null ? cls : `${cls} "${own}"`;
}

/** What a parameter asked for, for the scanner: the instance when exactly one answers it. */
export type ProvidedLookup =
  | { readonly found: true; readonly instance: unknown }
  | { readonly found: false; readonly several: boolean };

/**
 * The instance a constructor or handler parameter gets: the one provided as its type (by its class
 * or a base class) or as its `@Inject` key. Two or more is a Refusal naming each (pushed here):
 * picking one, the last or the first, once handed a controller that asked for the bank's
 * `OpenTarget` the fraud service's.
 */
export function providedFor(
  key: unknown,
  where: string,
  services: Services,
  problems: string[],
): ProvidedLookup {
  const all = services.of(key);
  if (all.length === 1) return { found: true, instance: all[0] };
  if (all.length === 0) return { found: false, several: false };
  const order = services.all();
  const named = all.map(
    (i) => `${describe(i) ?? String(i)} (app.provide #${order.indexOf(i) + 1})`,
  );
  problems.push(
    `${where} (${keyName(key)}) matches ${all.length} provided instances: ${named.join(', ')}: provide each under a key of its own (app.provide(x, { as: Key })) and ask for it with @Inject(Key), or provide only one`,
  );
  return { found: false, several: true };
}
