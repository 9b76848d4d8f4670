import type { Readable, Writable } from 'node:stream';
import type { CallGuard } from './call-guard';
import { checkLimit } from './client-settings';
import type { Client } from './client';
import { engineOf, type Engine } from './engine';
import { FetchError } from './errors';
import { fetchHead, type RedirectPolicy } from './fetch-head';
import { ResponseHead } from './head';
import { exchangeHeaders, type HeaderLine } from './header-line';
import type { Scope } from './scope';
import { Sink } from './sink';
import type { Transfer } from './transfer';

/**
 * The request body of an `Exchange`. A stream must say its length, which is sent as
 * `Content-Length`; a stream without one is a type error and refused at run time.
 */
export type RequestBody =
  | { readonly kind: 'none' }
  | { readonly kind: 'slice'; readonly bytes: Uint8Array | string }
  | { readonly kind: 'stream'; readonly stream: Readable; readonly length: number };

/** What `ex.begin(client, args)` takes. */
export interface ExchangeArgs {
  /** Default `GET`. */
  readonly method?: string;
  readonly url: string | URL;
  /** Written in order, all of them; a line named like an explicit field gives a second line. */
  readonly headers?: readonly HeaderLine[];
  readonly host?: string | null;
  readonly authorization?: string | null;
  readonly contentType?: string | null;
  readonly userAgent?: string | null;
  /** Deadline from `begin` to the last body byte; default the client's. */
  readonly timeoutMs?: number;
  /** Default the client's. */
  readonly stallMs?: number;
  /** Default `{ kind: 'none' }`. */
  readonly body?: RequestBody;
  /** Default `'refuse'`. */
  readonly redirects?: RedirectPolicy;
  /** Received body held for the reader before the socket is paused; default the client's `readBufferSize`. */
  readonly transferBuffer?: number;
  /** Ours: the scope to forward `X-Request-Id` from and to cancel with. Default none. */
  readonly scope?: Scope;
}

type State = 'idle' | 'begun' | 'discarded' | 'ended';

function misuse(what: string): FetchError {
  return new FetchError('ExchangeMisuse', what);
}

/**
 * A streaming call: `begin` returns the `ResponseHead`, the body is then read with one of `take`,
 * `readInto`, `pipe`, `stream` (or abandoned with `discard`), and `end` — required, safe twice —
 * gives back the permit, keeping the connection when at most `maxDrain` was left unread.
 *
 * @example
 * const ex = new Exchange();
 * try {
 *   const head = await ex.begin(client, { method: 'GET', url, redirects: 'follow' });
 *   const bytes = await ex.pipe(file);
 * } finally {
 *   await ex.end();
 * }
 */
export class Exchange {
  #state: State = 'idle';
  #engine: Engine | null = null;
  #guard: CallGuard | null = null;
  #transfer: Transfer | null = null;

  /** Sends the request and returns the head of the answer, the redirect policy applied. */
  async begin(client: Client, args: ExchangeArgs): Promise<ResponseHead> {
    if (this.#state !== 'idle') throw misuse('begin on an Exchange that was already begun');
    this.#state = 'ended';
    const engine = engineOf(client);
    checkLimit('exchange', 'timeoutMs', args.timeoutMs);
    checkLimit('exchange', 'stallMs', args.stallMs);
    checkLimit('exchange', 'transferBuffer', args.transferBuffer, 1);
    const guard = engine.guard(args.scope ?? null, args.timeoutMs ?? engine.settings.timeoutMs);
    try {
      const url = typeof args.url === 'string' ? new URL(args.url) : args.url;
      const { body, length } = requestBody(args.body);
      const headers = exchangeHeaders({
        headers: args.headers,
        host: args.host,
        authorization: args.authorization,
        contentType: args.contentType,
        userAgent: args.userAgent,
        contentLength: length,
        requestId: args.scope && engine.settings.forwardRequestId ? args.scope.requestId() : null,
      });
      await engine.admit(guard, null);
      const { transfer, redirected } = await fetchHead(
        engine,
        guard,
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: args.method ?? 'GET',
          headers,
          body,
        },
        {
          redirects: args.redirects ?? 'refuse',
          stallMs: args.stallMs ?? engine.settings.stallMs,
          highWaterMark: args.transferBuffer ?? engine.settings.readBufferSize,
        },
      );
      this.#engine = engine;
      this.#guard = guard;
      this.#transfer = transfer;
      this.#state = 'begun';
      return new ResponseHead({
        status: transfer.status,
        rawHeaders: transfer.rawHeaders,
        headers: transfer.headers,
        redirected,
      });
    } catch (e) {
      guard.release();
      throw e;
    }
  }

  /** The rest of the body as UTF-8 text; `BodyTooLarge` when it is longer than `max` bytes. */
  async take(_c: Scope, max: number): Promise<string> {
    checkLimit('take', 'max', max);
    const bytes = await this.#reader().collect(max);
    return bytes.toString('utf8');
  }

  /** Fills `buf` exactly; `BodyTooShort` when the body ends first. Returns `buf.length`. */
  async readInto(buf: Uint8Array): Promise<number> {
    const t = this.#reader();
    let filled = 0;
    while (filled < buf.length) {
      const chunk = await t.next();
      if (chunk === null)
        throw new FetchError(
          'BodyTooShort',
          `body ended after ${filled} of the ${buf.length} bytes asked for`,
        );
      const n = Math.min(chunk.length, buf.length - filled);
      buf.set(n === chunk.length ? chunk : chunk.subarray(0, n), filled);
      filled += n;
      if (n < chunk.length) t.unshift(chunk.subarray(n));
    }
    return filled;
  }

  /** Writes the rest of the body into `w` (not ending it) and returns the byte count. */
  async pipe(w: Writable): Promise<number> {
    const t = this.#reader();
    const sink = new Sink(w, this.#guard as CallGuard);
    try {
      let total = 0;
      for (let chunk = await t.next(); chunk !== null; chunk = await t.next()) {
        await sink.write(chunk);
        total += chunk.length;
      }
      await sink.flush();
      return total;
    } finally {
      sink.close();
    }
  }

  /** Writes one chunk of at most `limit` bytes into `w` and returns its size; 0 means the body has ended. */
  async stream(w: Writable, limit: number): Promise<number> {
    checkLimit('stream', 'limit', limit, 1);
    const t = this.#reader();
    const chunk = await t.next();
    if (chunk === null) return 0;
    const piece = chunk.length > limit ? chunk.subarray(0, limit) : chunk;
    if (piece !== chunk) t.unshift(chunk.subarray(limit));
    const sink = new Sink(w, this.#guard as CallGuard);
    try {
      await sink.write(piece);
      await sink.flush();
      return piece.length;
    } finally {
      sink.close();
    }
  }

  /** @internal the next piece of the body as it arrives, or null at its end (the typed client reads event streams with it) */
  async chunk(): Promise<Uint8Array | null> {
    return this.#reader().next();
  }

  /**
   * Abandons the body and closes the connection, whatever `maxDrain` says. `end()` is still
   * required.
   */
  discard(): void {
    if (this.#state !== 'begun') return;
    this.#state = 'discarded';
    this.#transfer?.abort(new FetchError('Canceled', 'body discarded'));
  }

  /**
   * Required after `begin`; safe twice. Reads an unread rest of at most `maxDrain` so the
   * connection is pooled (more, and it is dropped), then gives back the permit. Never throws.
   */
  async end(): Promise<void> {
    const state = this.#state;
    this.#state = 'ended';
    if (state === 'idle' || state === 'ended') return;
    const t = this.#transfer;
    const guard = this.#guard;
    this.#transfer = null;
    this.#guard = null;
    if (t && state === 'begun') await t.drain((this.#engine as Engine).settings.maxDrain);
    guard?.release();
  }

  #reader(): Transfer {
    if (this.#state === 'begun' && this.#transfer) return this.#transfer;
    if (this.#state === 'idle') throw misuse('body read before begin');
    if (this.#state === 'discarded') throw misuse('body read after discard');
    throw misuse('body read after end');
  }
}

function requestBody(body: RequestBody | undefined): {
  body: Buffer | Readable | null;
  length: number | null;
} {
  if (!body || body.kind === 'none') return { body: null, length: null };
  if (body.kind === 'slice') {
    const b = body.bytes;
    if (typeof b === 'string') return { body: Buffer.from(b, 'utf8'), length: null };
    if (b instanceof Uint8Array)
      return {
        body: Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength),
        length: null,
      };
    throw new FetchError('BadBody', 'a slice body holds text or bytes');
  }
  if (body.kind === 'stream') {
    const len: unknown = (body as { length?: unknown }).length;
    if (typeof len !== 'number' || !Number.isSafeInteger(len) || len < 0) {
      throw new FetchError(
        'BadBody',
        'a stream body must carry its length (a non-negative integer)',
      );
    }
    return { body: body.stream, length: len };
  }
  throw new FetchError(
    'BadBody',
    `unknown body kind ${JSON.stringify((body as { kind?: unknown }).kind)}`,
  );
}
