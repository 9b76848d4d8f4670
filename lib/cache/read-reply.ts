/**
 * One reply of Redis (RESP2): a status (string), a bulk string (bytes, as a claim or a kept answer
 * is stored), an integer, an error, null (a nil bulk or array), or an array of replies.
 */
export type Reply = string | Buffer | number | Error | null | Reply[];

/** A reply read whole, and where the next one starts. */
export interface ReadReply {
  readonly value: Reply;
  readonly end: number;
}

/**
 * Reads the reply that starts at `at` in `buf`. When `buf` does not hold all of it yet, answers the
 * length `buf` must at least reach before reading again is worth it (a large bulk string arrives
 * in many chunks: the reader waits for its length rather than reading it again at every chunk).
 * Throws on bytes that are not RESP2 (the connection is then unusable).
 */
export function readReply(buf: Buffer, at: number): ReadReply | number {
  const eol = buf.indexOf(13, at);
  if (eol < 0 || eol + 1 >= buf.length) return Math.max(buf.length + 1, at + 3);
  const type = buf[at];
  if (type === 0x24) return readBulk(buf, eol, readInteger(buf, at + 1, eol)); // $
  if (type === 0x2a) return readArray(buf, eol, readInteger(buf, at + 1, eol)); // *
  if (type === 0x3a) return { value: readInteger(buf, at + 1, eol), end: eol + 2 }; // :
  if (type === 0x2b) return { value: buf.toString('utf8', at + 1, eol), end: eol + 2 }; // +
  if (type === 0x2d) return { value: new Error(buf.toString('utf8', at + 1, eol)), end: eol + 2 }; // -
  throw new Error(
    `Redis sent a reply of unknown type ${JSON.stringify(String.fromCharCode(type!))}`,
  );
}

function readBulk(buf: Buffer, eol: number, length: number): ReadReply | number {
  if (length < 0) return { value: null, end: eol + 2 };
  const start = eol + 2;
  const end = start + length + 2;
  if (end > buf.length) return end;
  return { value: buf.subarray(start, start + length), end };
}

function readArray(buf: Buffer, eol: number, length: number): ReadReply | number {
  if (length < 0) return { value: null, end: eol + 2 };
  const items: Reply[] = [];
  let next = eol + 2;
  for (let i = 0; i < length; i++) {
    const item = readReply(buf, next);
    if (typeof item === 'number') return item;
    items.push(item.value);
    next = item.end;
  }
  return { value: items, end: next };
}

/** The decimal integer between `from` and `to` (the CR): read from the bytes, no string made. */
function readInteger(buf: Buffer, from: number, to: number): number {
  const negative = buf[from] === 0x2d;
  let n = 0;
  for (let i = negative ? from + 1 : from; i < to; i++) {
    const digit = buf[i]! - 0x30;
    if (digit < 0 || digit > 9)
      throw new Error('Redis sent a length or integer that is not a number');
    n = n * 10 + digit;
  }
  return negative ? -n : n;
}
