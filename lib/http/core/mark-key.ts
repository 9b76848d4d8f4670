// How a capability's decorator leaves its mark on a route, and how the capability reads it back
// from the route record. Each capability declares its key next to its own code; the scanner and the
// record carry every mark without knowing any of them.

declare const MARK: unique symbol;

/**
 * The key of one capability's mark, typed by what the mark holds: `record.marks.get(IDEMPOTENT)`
 * is an `IdempotentMark` or undefined. Keys compare by identity, so two capabilities never clash
 * even when their names do.
 * @example export const RATE = new MarkKey<RateMark>('rate');
 */
export class MarkKey<T> {
  // Only for the type checker, never set: ties a key to the type of its mark. Public and keyed by
  // a symbol so that it survives into the .d.ts (a private member would lose its type there).
  declare readonly [MARK]?: T;

  /** `name` is for people reading a record (and `String(key)`); it identifies nothing. */
  constructor(readonly name: string) {
    Object.freeze(this);
  }

  toString(): string {
    return `MarkKey(${this.name})`;
  }
}

/**
 * The capability marks of one route (`@Idempotent`, `@RateLimit`, `@WebSocketRoute` …), read through
 * their keys. Frozen: made once by the scanner, read at build.
 */
export class RouteMarks {
  /** A route no capability marked (every built-in route). */
  static readonly NONE = new RouteMarks(new Map());

  readonly #marks: ReadonlyMap<MarkKey<unknown>, unknown>;

  constructor(marks: ReadonlyMap<MarkKey<unknown>, unknown>) {
    this.#marks = new Map(marks);
    Object.freeze(this);
  }

  /** The mark the key's capability left on the route, or undefined when it left none. */
  get<T>(key: MarkKey<T>): T | undefined {
    return this.#marks.get(key) as T | undefined;
  }

  has(key: MarkKey<unknown>): boolean {
    return this.#marks.has(key);
  }

  /** How many capabilities marked the route. */
  get size(): number {
    return this.#marks.size;
  }

  /** The keys of the marks the route carries, in the order they were left. */
  keys(): IterableIterator<MarkKey<unknown>> {
    return this.#marks.keys();
  }
}
