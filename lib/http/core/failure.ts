/** Bytes a failure message may take; a longer one is cut at a character boundary, never refused. */
export const MESSAGE_SLOT = 240;

/** A failure chosen by the program: thrown, it answers `status` with `message` in the failure shape. */
export class Failure extends Error {
  readonly status: number;
  /** Set by `fail.internal`: the message is logged, the client gets the status phrase. */
  readonly internal: boolean;
  constructor(status: number, message: string, internal = false) {
    super(truncate(message));
    this.name = 'Failure';
    this.status = status;
    this.internal = internal;
  }
}

export function truncate(message: string): string {
  if (message.length <= MESSAGE_SLOT / 3) return message; // fast path: cannot exceed 240 UTF-8 bytes
  const bytes = Buffer.from(message, 'utf8');
  if (bytes.length <= MESSAGE_SLOT) return message;
  let end = MESSAGE_SLOT;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back off to a character start
  return bytes.subarray(0, end).toString('utf8');
}
