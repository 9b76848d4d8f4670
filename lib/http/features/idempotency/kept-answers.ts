import type { HeaderEntry } from '../../core/answers';

/** A kept answer as the store holds it, decoded once: what a replay writes. */
export interface KeptAnswer {
  readonly fp: string;
  readonly status: number;
  readonly type: string | null;
  /** The body; an ASCII one as a string (the same bytes in UTF-8). */
  readonly body: Buffer | string | null;
  /** The answer's own headers, lower-cased, checked when the answer was first sent. */
  readonly own: readonly HeaderEntry[];
}

/** The parts of a request its fingerprint is made of. */
export interface RequestParts {
  readonly method: string;
  readonly path: string;
  readonly rawQuery: string;
  readonly body: Buffer;
}

/** A decoded record, and a request known to hash to its fingerprint. */
export interface KeptEntry {
  /** The record's bytes: the entry stands only while the store still gives exactly these. */
  record: Buffer;
  readonly answer: KeptAnswer;
  parts: RequestParts | null;
}

/**
 * Kept answers decoded once per process, for routes replayed often. The store stays the source
 * of truth: every replay still reads the record, and an entry is used only when the record read
 * is byte for byte the one it was decoded from. What it saves is decoding the record and, for a
 * retry identical to one seen before, the SHA-256 of the request.
 *
 * Bounded by count and by size: at most `MAX_ENTRIES` entries of at most `MAX_ENTRY_BYTES`
 * (record plus request body) each, first in first out: at most 4 MiB per idempotent route.
 */
export class KeptAnswers {
  static readonly MAX_ENTRIES = 256;
  static readonly MAX_ENTRY_BYTES = 16 * 1024;
  readonly #entries = new Map<string, KeptEntry>();
  /**
   * The same entries by the record's Buffer: a store that hands out the Buffer it keeps
   * (`MemoryStore`) is then recognised by identity, without hashing the key a second time.
   */
  readonly #byRecord = new WeakMap<Buffer, KeptEntry>();

  /** The entry for `record` under `id`, decoding (and remembering) it when it is not the one known; null when `decode` finds no kept answer. */
  find(
    id: string,
    record: Buffer,
    decode: (record: Buffer) => KeptAnswer | null,
  ): KeptEntry | null {
    // The same Buffer is the same record: a store never writes into bytes it handed out.
    const same = this.#byRecord.get(record);
    if (same !== undefined) return same;
    const known = this.#entries.get(id);
    // Equal bytes in another Buffer take its place, so the store's own copy is recognised next time.
    if (known !== undefined && known.record.equals(record)) {
      known.record = record;
      this.#byRecord.set(record, known);
      return known;
    }
    const answer = decode(record);
    if (answer === null) return null;
    const entry: KeptEntry = { record, answer, parts: null };
    this.#remember(id, entry);
    return entry;
  }

  /** True when `parts` is the request already known to hash to the entry's fingerprint. */
  static known(entry: KeptEntry, parts: RequestParts): boolean {
    const p = entry.parts;
    return (
      p !== null &&
      p.method === parts.method &&
      p.path === parts.path &&
      p.rawQuery === parts.rawQuery &&
      p.body.equals(parts.body)
    );
  }

  /** Notes that `parts` hashes to the entry's fingerprint, when it is small enough to keep. */
  static learn(entry: KeptEntry, parts: RequestParts): void {
    if (entry.record.length + parts.body.length > KeptAnswers.MAX_ENTRY_BYTES) return;
    // The body's own copy: a request body is often a view into a larger socket read.
    entry.parts = {
      method: parts.method,
      path: parts.path,
      rawQuery: parts.rawQuery,
      body: Buffer.from(parts.body),
    };
  }

  #remember(id: string, entry: KeptEntry): void {
    const old = this.#entries.get(id);
    if (old !== undefined) {
      this.#entries.delete(id);
      this.#byRecord.delete(old.record);
    }
    if (entry.record.length > KeptAnswers.MAX_ENTRY_BYTES) return;
    if (this.#entries.size >= KeptAnswers.MAX_ENTRIES) {
      const [oldestId, oldest] = this.#entries.entries().next().value!;
      this.#entries.delete(oldestId);
      this.#byRecord.delete(oldest.record);
    }
    this.#entries.set(id, entry);
    this.#byRecord.set(entry.record, entry);
  }
}
