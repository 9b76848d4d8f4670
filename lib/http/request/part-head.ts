/** What one file part's header block declared, read by fw beside busboy. */
export interface PartHead {
  /** The part's `name`, as busboy reads it (UTF-8). */
  readonly name: string;
  /** Its `Content-Type` as `type/subtype` in lower case, or null when it declared none readable. */
  readonly declaredType: string | null;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const TYPE = new RegExp(`^(${TOKEN}/${TOKEN})(?:[ \\t]*;|[ \\t]*$)`);
const FORM_DATA = new RegExp(`^form-data(?![!#$%&'*+.^_\`|~0-9A-Za-z-])`, 'i');
const NAME = /;[ \t]*name=(?:"((?:[^"\\]|\\.)*)"|([^;\s"]+))/i;
const FILENAME = /;[ \t]*filename\*?=/i;

/**
 * The head of a part busboy hands over as a file (a `filename` parameter, or the type
 * `application/octet-stream`), from its header block (latin1, up to the blank line); null for a
 * field or a part busboy skips (no `Content-Disposition: form-data`). busboy reads an undeclared
 * type as `text/plain` (RFC 7578 §4.4) and says nothing of whether it was declared: this does.
 */
export function partHeadOf(block: string): PartHead | null {
  let disposition: string | undefined;
  let type: string | undefined;
  // A line starting with a space or tab continues the one before (obsolete folding, which busboy reads).
  const lines = block.split('\r\n').reduce<string[]>((all, line) => {
    if (/^[ \t]/.test(line) && all.length > 0) all[all.length - 1] += line;
    else all.push(line);
    return all;
  }, []);
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const field = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    // busboy reads the first of each.
    if (field === 'content-disposition') disposition ??= value;
    else if (field === 'content-type') type ??= value;
  }
  if (disposition === undefined || !FORM_DATA.test(disposition)) return null;
  const declaredType = type === undefined ? null : (TYPE.exec(type)?.[1]?.toLowerCase() ?? null);
  if (!FILENAME.test(disposition) && declaredType !== 'application/octet-stream') return null;
  const m = NAME.exec(disposition);
  const raw = m === null ? '' : (m[1]?.replace(/\\(.)/g, '$1') ?? m[2]!);
  return { name: Buffer.from(raw, 'latin1').toString('utf8'), declaredType };
}
