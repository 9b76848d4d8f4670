import { unspell } from '../json';
import { headerOf, linesOf, type HeaderLine } from './header-line';

/** What `FetchResponse` is made from; internal. */
export interface FetchResponseInit {
  readonly status: number;
  readonly rawHeaders: readonly Buffer[];
  readonly headers: Record<string, string | string[] | undefined>;
  readonly bytes: Buffer;
  readonly redirected: URL | null;
}

/** A class `json(Type)` can fill, or a union declared with `Union(...)`. */
export type JsonClass<T> = abstract new (...args: never[]) => T;

/**
 * A whole answer: status, head and body, read to the end under the call's limits. A 4xx or 5xx
 * is a `FetchResponse` too, not an error: the caller decides what a status means.
 *
 * @example
 * const res = await client.get(c, 'http://stock.internal/items/7', {});
 * if (!res.ok) throw fail.status(502, 'stock answered %d', res.status);
 * return res.json(Item);
 */
export class FetchResponse {
  readonly status: number;
  /** The body as received. */
  readonly bytes: Buffer;
  /** The URL a followed redirect chain ended at; null when nothing was followed. */
  readonly redirected: URL | null;
  readonly #raw: readonly Buffer[];
  readonly #parsed: FetchResponseInit['headers'];
  #lines: readonly HeaderLine[] | null = null;
  #text: string | null = null;

  constructor(init: FetchResponseInit) {
    this.status = init.status;
    this.bytes = init.bytes;
    this.redirected = init.redirected;
    this.#raw = init.rawHeaders;
    this.#parsed = init.headers;
  }

  /** True for 200–299. A read-only property, as in `fetch`: `if (!res.ok) throw …` works. */
  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  /** The body as UTF-8 text (decoded once, on first use). */
  get body(): string {
    return (this.#text ??= this.bytes.toString('utf8'));
  }

  /** A header by name, case-insensitively; repeated lines joined with ", "; null when absent. */
  header(name: string): string | null {
    return headerOf(this.#parsed, name);
  }

  /** The whole header block, in the order received, names as the server spelled them. */
  get headers(): readonly HeaderLine[] {
    return (this.#lines ??= Object.freeze(linesOf(this.#raw)));
  }

  /**
   * The body parsed as JSON; with a class, into an instance of it (class-transformer, as `@Body`
   * does). Unknown fields are no error. Invalid JSON throws the parser's `SyntaxError`. A class's
   * JSON spelling (`@Json`, `Union`, `jsonEnum`) is read back to its own names, with no
   * declaration beyond the marker.
   */
  json(): unknown;
  json<T>(type: JsonClass<T>): T;
  json<T>(type?: JsonClass<T>): unknown {
    const parsed: unknown = JSON.parse(this.body);
    if (!type || parsed === null || typeof parsed !== 'object') return parsed;
    return unspell(type, parsed);
  }
}
