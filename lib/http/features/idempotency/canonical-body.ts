/**
 * A JSON object or array body as canonical text (keys sorted at every level, no whitespace, each
 * number and string as `JSON.stringify` writes it), or null to fingerprint the bytes as sent: the
 * body is not JSON, is a bare scalar, or holds a number that parsing could change (16 digits or
 * more in a row, or a three-digit exponent: two different requests must never hash alike).
 *
 * Why: the fingerprint tells a retry from another request under one key. A client that sends the
 * same fields in another order (an agent building its arguments anew, a tool call and an HTTP call
 * under one key) sends the same request.
 */
export function canonicalBody(body: Buffer): string | null {
  const first = firstByte(body);
  if (first !== 0x7b && first !== 0x5b) return null; // `{` or `[`
  const text = body.toString('utf8');
  if (UNSAFE_NUMBER.test(text)) return null;
  try {
    return canonical(JSON.parse(text));
  } catch {
    // Not JSON, or nested past what the walk can hold: the bytes as sent.
    return null;
  }
}

const UNSAFE_NUMBER = /\d{16}|[eE][+-]?\d{3}/;

function firstByte(body: Buffer): number {
  for (let i = 0; i < body.length; i++) {
    const b = body[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return b;
  }
  return -1;
}

/** Written as text, never as an object built anew (a `__proto__` key stays a key); loops, not map and join, as this runs per request. */
function canonical(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) s += (i === 0 ? '' : ',') + canonical(v[i]);
    return s + ']';
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    s += (i === 0 ? '' : ',') + JSON.stringify(k) + ':' + canonical(o[k]);
  }
  return s + '}';
}
