/**
 * The differences between two JSON documents, one line each, by JSON Pointer (RFC 6901):
 * `+ /paths/~1orders/get` (only in `now`), `- …` (only in `was`), `~ /info/version: "1" → "2"`.
 * Objects are compared key by key, arrays index by index, scalars by their JSON text.
 */
export function documentDiff(was: unknown, now: unknown): string[] {
  const lines: string[] = [];
  walk(was, now, '', lines);
  return lines;
}

function walk(was: unknown, now: unknown, at: string, lines: string[]): void {
  if (isObject(was) && isObject(now)) {
    for (const key of Object.keys(was)) if (!(key in now)) lines.push(`- ${at}/${escape(key)}`);
    for (const key of Object.keys(now)) {
      const path = `${at}/${escape(key)}`;
      if (!(key in was)) lines.push(`+ ${path}`);
      else walk(was[key], now[key], path, lines);
    }
    return;
  }
  if (Array.isArray(was) && Array.isArray(now)) {
    // Index by index, so one added tag or parameter reads as one line, not the whole list.
    for (let i = 0; i < Math.max(was.length, now.length); i++) {
      if (i >= now.length) lines.push(`- ${at}/${i}`);
      else if (i >= was.length) lines.push(`+ ${at}/${i}`);
      else walk(was[i], now[i], `${at}/${i}`, lines);
    }
    return;
  }
  const a = JSON.stringify(was);
  const b = JSON.stringify(now);
  if (a !== b) lines.push(`~ ${at || '/'}: ${short(a)} → ${short(b)}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Long values are cut: the pointer already says where to look. */
const short = (json: string | undefined) =>
  json === undefined ? 'undefined' : json.length > 80 ? `${json.slice(0, 77)}...` : json;
