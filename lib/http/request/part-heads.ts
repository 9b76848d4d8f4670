import type { Writable } from 'node:stream';
import { partHeadOf, type PartHead } from './part-head';

const BLANK_LINE = Buffer.from('\r\n\r\n', 'latin1');

/** A file part's head found in the bytes, with where its header block ended in the body. */
interface Found extends PartHead {
  readonly end: number;
}

/**
 * What each file part declared, found in the bytes busboy is reading when busboy hands the part
 * over (busboy reads an undeclared type as `text/plain` and does not say which it was). It holds
 * the chunks busboy read last, enough to see a whole header block (busboy's 16 KiB) before the
 * newest, and reads them only when a file part arrives: a file's bytes are searched once, by
 * busboy, not twice.
 */
export class PartHeads {
  readonly #needle: Buffer;
  readonly #window: number;
  /** The chunks busboy read last, the newest last; the first delimiter has no CRLF of its own. */
  readonly #recent: Buffer[] = [Buffer.from('\r\n', 'latin1')];
  #held = 2;
  /** Body offset of the first byte held. */
  #dropped = 0;
  /** The heads found in what is held, worked out once per chunk (null: not yet). */
  #found: Found[] | null = null;
  /** Where the header block of the last file part handed over ended. */
  #taken = -1;

  /**
   * Follows what `parser` (busboy) reads: a Writable reads its chunks through `_write`, one at a
   * time and in order, and busboy hands a file part over while reading the chunk that ends its
   * header block (or the next, when the block ends a chunk).
   */
  static follow(parser: Writable, boundary: string, ceiling: number): PartHeads {
    const heads = new PartHeads(boundary, ceiling);
    const write = parser._write.bind(parser);
    parser._write = (chunk: Buffer, encoding, done) => {
      heads.reading(chunk);
      write(chunk, encoding, done);
    };
    return heads;
  }

  constructor(boundary: string, ceiling: number) {
    this.#needle = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.#window = ceiling + this.#needle.length + BLANK_LINE.length;
  }

  /** busboy is about to read `chunk` (it reads chunks one at a time, in order). */
  reading(chunk: Buffer): void {
    this.#recent.push(chunk);
    this.#held += chunk.length;
    this.#found = null;
    while (this.#held - this.#recent[0]!.length - chunk.length >= this.#window) {
      const old = this.#recent.shift()!;
      this.#held -= old.length;
      this.#dropped += old.length;
    }
  }

  /**
   * The head of the file part busboy has just handed over, named `name`; undefined when the bytes
   * show no such part next (a part read otherwise than busboy read it): the caller keeps busboy's word.
   */
  next(name: string): PartHead | undefined {
    const head = (this.#found ??= this.#find()).find((h) => h.end > this.#taken);
    if (head === undefined || head.name !== name) return undefined;
    this.#taken = head.end;
    return head;
  }

  /** Every file part whose header block is whole in what is held, in order. */
  #find(): Found[] {
    const bytes = Buffer.concat(this.#recent, this.#held);
    const found: Found[] = [];
    const n = this.#needle.length;
    for (let at = bytes.indexOf(this.#needle); at >= 0; at = bytes.indexOf(this.#needle, at + n)) {
      // `--` after the delimiter closes the form; busboy reads headers only after a CRLF.
      if (bytes[at + n] !== 0x0d || bytes[at + n + 1] !== 0x0a) continue;
      const blank = bytes.indexOf(BLANK_LINE, at + n);
      if (blank < 0) break;
      const head = partHeadOf(bytes.toString('latin1', at + n + 2, blank + BLANK_LINE.length));
      if (head !== null) found.push({ ...head, end: this.#dropped + blank + BLANK_LINE.length });
    }
    return found;
  }
}
