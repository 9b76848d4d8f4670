import type { ScriptArg } from './script-batch';

const CRLF_LENGTH = 2;
/** `$`, at most 16 digits of a length, CR LF: room for any header of one argument. */
const HEADER_ROOM = 19;

/**
 * One Redis command (a RESP2 array of bulk strings) in one buffer, its arguments given as several
 * lists in order (e.g. the verb, then the keys, then the arguments): a batch of claims is written
 * without first being copied into one list. Strings are sent as UTF-8, numbers in decimal.
 */
export function encodeCommand(...parts: ReadonlyArray<readonly ScriptArg[]>): Buffer {
  let count = 0;
  let room = HEADER_ROOM;
  for (const part of parts) {
    count += part.length;
    for (const arg of part) room += HEADER_ROOM + CRLF_LENGTH + byteRoom(arg);
  }
  const out = Buffer.allocUnsafe(room);
  let at = out.write(`*${count}\r\n`, 0, 'latin1');
  for (const part of parts)
    for (const arg of part) {
      if (Buffer.isBuffer(arg)) {
        at += out.write(`$${arg.length}\r\n`, at, 'latin1');
        at += arg.copy(out, at);
      } else {
        const text = typeof arg === 'string' ? arg : String(arg);
        at += out.write(`$${Buffer.byteLength(text)}\r\n`, at, 'latin1');
        at += out.write(text, at, 'utf8');
      }
      out[at++] = 13;
      out[at++] = 10;
    }
  return out.subarray(0, at);
}

/** At least the bytes `arg` takes: a string's UTF-8 is at most three bytes per UTF-16 unit. */
function byteRoom(arg: ScriptArg): number {
  if (Buffer.isBuffer(arg)) return arg.length;
  if (typeof arg === 'number') return 24;
  return arg.length * 3;
}
