const CRLF2 = 0x0d0a0d0a;

/**
 * Measures each part's header block of a multipart body as the bytes pass, so a bound below
 * busboy's fixed 16 KiB is enforced exactly. It only finds where header blocks are (after each
 * `\r\n--boundary\r\n`, up to the blank line); busboy still does the parsing.
 */
export class PartHeaderWatch {
  readonly #needle: Buffer;
  readonly #max: number;
  /** The last bytes of the body seen, so a delimiter split between two chunks is found. */
  #tail: Buffer;
  /** 0: in a part's body; 1, 2: the two bytes after a delimiter; 3: in a header block; 4: after the close delimiter. */
  #state = 0;
  #after = 0;
  #size = 0;
  #last4 = 0;

  constructor(boundary: string, max: number) {
    this.#needle = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.#max = max;
    // The first delimiter has no CRLF before it: start as if one had just passed.
    this.#tail = Buffer.from('\r\n', 'latin1');
  }

  /** Looks at the next chunk; false once a header block is larger than the bound. */
  push(chunk: Buffer): boolean {
    let at = 0;
    while (at < chunk.length) {
      if (this.#state === 4) return true;
      if (this.#state === 0) {
        const found = this.#findDelimiter(chunk, at);
        if (found < 0) return true;
        at = found;
        this.#state = 1;
        continue;
      }
      const byte = chunk[at++]!;
      if (this.#state === 1 || this.#state === 2) {
        this.#after = (this.#after << 8) | byte;
        if (this.#state === 2) {
          // `--` closes the form (what follows is an epilogue); anything else starts a header block.
          this.#state = (this.#after & 0xffff) === 0x2d2d ? 4 : 3;
          this.#size = 0;
          this.#last4 = this.#after & 0xffff;
        } else this.#state = 2;
        continue;
      }
      if (++this.#size > this.#max) return false;
      this.#last4 = ((this.#last4 << 8) | byte) >>> 0;
      if (this.#last4 === CRLF2) {
        this.#state = 0;
        this.#tail = Buffer.alloc(0);
      }
    }
    return true;
  }

  /** The offset just past the next delimiter in `chunk` from `from`, or -1 (its tail kept). */
  #findDelimiter(chunk: Buffer, from: number): number {
    const needle = this.#needle;
    const n = needle.length;
    if (this.#tail.length > 0) {
      const joint = Buffer.concat([this.#tail, chunk.subarray(from, from + n - 1)]);
      const i = joint.indexOf(needle);
      if (i >= 0) {
        this.#tail = Buffer.alloc(0);
        return from + i + n - (joint.length - Math.min(n - 1, chunk.length - from));
      }
    }
    const i = chunk.indexOf(needle, from);
    if (i >= 0) {
      this.#tail = Buffer.alloc(0);
      return i + n;
    }
    const rest = chunk.subarray(Math.max(from, chunk.length - (n - 1)));
    this.#tail =
      rest.length >= n - 1
        ? Buffer.from(rest)
        : Buffer.concat([this.#tail, rest]).subarray(-(n - 1));
    return -1;
  }
}
