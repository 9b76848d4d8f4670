import type { ScriptArg } from './script-batch';

/** `$`, at most 16 digits of a length, CR LF, and the CR LF after the argument. */
const FRAME_ROOM = 21;

/**
 * One Redis command (a RESP2 array of bulk strings) in one buffer, its arguments given as several
 * lists in order (e.g. the verb, then the keys, then the arguments): a batch of claims is written
 * without first being copied into one list. Strings are sent as UTF-8, numbers in decimal.
 *
 * It runs once per batch of claims or keeps, on every idempotent request's path: the frames,
 * ASCII strings and whole numbers are written byte by byte here, since each `Buffer#write` is a
 * call into C++ that costs more than the few bytes it writes.
 */
export function encodeCommand(...parts: ReadonlyArray<readonly ScriptArg[]>): Buffer {
  let count = 0;
  let room = FRAME_ROOM;
  for (const part of parts) {
    count += part.length;
    for (const arg of part) room += FRAME_ROOM + byteRoom(arg);
  }
  const out = Buffer.allocUnsafe(room);
  out[0] = 0x2a; // *
  let at = writeDigits(out, 1, count);
  for (const part of parts) for (const arg of part) at = writeBulk(out, at, arg);
  return out.subarray(0, at);
}

/** Writes `arg` as a bulk string at `at`; answers where the next one starts. */
function writeBulk(out: Buffer, at: number, arg: ScriptArg): number {
  if (Buffer.isBuffer(arg)) {
    at = writeLength(out, at, arg.length);
    out.set(arg, at);
    at += arg.length;
  } else if (typeof arg === 'number' && Number.isSafeInteger(arg) && arg >= 0) {
    // The digits and their CR LF are the whole bulk string after its frame.
    return writeDigits(out, writeLength(out, at, countDigits(arg)), arg);
  } else {
    const text = typeof arg === 'string' ? arg : String(arg);
    // Most strings (keys, verbs) are ASCII, one byte per unit: written in one pass, and written
    // again as UTF-8 if a unit past ASCII turns up.
    let to = writeLength(out, at, text.length);
    let units = 0;
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      units |= unit;
      out[to++] = unit;
    }
    if (units <= 0x7f) at = to;
    else {
      at = writeLength(out, at, Buffer.byteLength(text));
      at += out.write(text, at, 'utf8');
    }
  }
  out[at++] = 13;
  out[at++] = 10;
  return at;
}

/** `$<n>\r\n` at `at`; answers where the bytes of the argument start. */
function writeLength(out: Buffer, at: number, n: number): number {
  out[at] = 0x24; // $
  return writeDigits(out, at + 1, n);
}

/** The decimal digits of `n` (a whole number from 0) then CR LF at `at`; answers the end. */
function writeDigits(out: Buffer, at: number, n: number): number {
  const digits = countDigits(n);
  // Below 2^31 (every length and TTL) in 32-bit integers, which V8 divides far faster than doubles.
  if (n <= 0x7fffffff)
    for (let i = at + digits - 1, rest = n | 0; i >= at; i--) {
      const next = (rest / 10) | 0;
      out[i] = 0x30 + rest - next * 10;
      rest = next;
    }
  else
    for (let i = at + digits - 1, rest = n; i >= at; i--, rest = Math.floor(rest / 10))
      out[i] = 0x30 + (rest % 10);
  out[at + digits] = 13;
  out[at + digits + 1] = 10;
  return at + digits + 2;
}

function countDigits(n: number): number {
  if (n < 10) return 1;
  if (n < 100) return 2;
  if (n < 1000) return 3;
  if (n < 10000) return 4;
  let digits = 5;
  for (let rest = Math.floor(n / 100000); rest >= 1; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

/** At least the bytes `arg` takes: a string's UTF-8 is at most three bytes per UTF-16 unit. */
function byteRoom(arg: ScriptArg): number {
  if (Buffer.isBuffer(arg)) return arg.length;
  if (typeof arg === 'number') return 24;
  return arg.length * 3;
}
