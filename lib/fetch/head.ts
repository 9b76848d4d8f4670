import { headerOf, linesOf, type HeaderLine } from './header-line';
import type { Scope } from './scope';

/** What `ResponseHead` is made from; internal. */
export interface HeadInit {
  readonly status: number;
  readonly rawHeaders: readonly Buffer[];
  readonly headers: Record<string, string | string[] | undefined>;
  readonly redirected: URL | null;
}

function lengthOf(parsed: HeadInit['headers']): number | null {
  const v = headerOf(parsed, 'content-length');
  return v !== null && /^\d+$/.test(v) ? Number(v) : null;
}

/**
 * The head of an `Exchange`'s answer, returned by `begin`. Its fields are its own copies, so
 * they stay valid after the body has been read; `keep(c)` exists for parity with the spec.
 *
 * @example
 * const head = await ex.begin(client, { method: 'GET', url });
 * if (!head.ok) throw new Error(`upstream ${head.status}`);
 */
export class ResponseHead {
  readonly status: number;
  /** `Content-Length` when the answer sent one. */
  readonly contentLength: number | null;
  readonly contentType: string | null;
  /** The URL a followed redirect chain ended at; null when nothing was followed. */
  readonly redirected: URL | null;
  readonly #raw: readonly Buffer[];
  readonly #parsed: HeadInit['headers'];
  #lines: readonly HeaderLine[] | null = null;

  constructor(init: HeadInit) {
    this.status = init.status;
    this.#raw = init.rawHeaders;
    this.#parsed = init.headers;
    this.contentLength = lengthOf(init.headers);
    this.contentType = headerOf(init.headers, 'content-type');
    this.redirected = init.redirected;
  }

  /** True for 200–299. A read-only property, as in `fetch`: `if (!res.ok) throw …` works. */
  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  /** A header by name, case-insensitively; repeated lines joined with ", "; null when absent. */
  header(name: string): string | null {
    return headerOf(this.#parsed, name);
  }

  /** The whole header block, in the order received. */
  get headers(): readonly HeaderLine[] {
    return (this.#lines ??= Object.freeze(linesOf(this.#raw)));
  }

  /**
   * `redirected` as one string (the end of a followed chain), or null. Not the `Location` of an
   * exposed 3xx: read that with `header('location')`.
   */
  location(): string | null {
    return this.redirected ? this.redirected.href : null;
  }

  /** The head for use after the body is read; it already is one, so this returns it. */
  keep(_c?: Scope): ResponseHead {
    return this;
  }
}
