import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CallEnd } from './call-guard';
import { FetchError } from './errors';

/** One request as undici's `dispatch` wants it; `path` is written to the request line as is. */
export interface TransferRequest {
  readonly origin: string;
  readonly path: string;
  readonly method: string;
  /** Flat `[name, value, name, value, …]`, so order and repeated names survive. */
  readonly headers: readonly string[];
  readonly body: Buffer | Readable | null;
}

export interface TransferLimits {
  readonly stallMs: number;
  /** Received body held for a reader before the socket is paused. */
  readonly highWaterMark: number;
}

type Mode = 'stream' | 'collect' | 'drain';

const NO_BODY_STATUS = new Set([204, 304]);

function onStall(t: Transfer): void {
  t.abort(new FetchError('Stalled', `nothing arrived for ${t.stallMs} ms`));
}

/**
 * One request/response over undici's `dispatch`, without redirects. Ours rather than undici's
 * `request()`: it needs to pause the socket when its reader is slow without counting that as
 * silence (`stallMs` runs only while we wait for bytes), to enforce `maxBody` chunk by chunk, to
 * decide per call whether an unread rest is drained (≤ `maxDrain`, the connection is kept) or the
 * connection dropped, and to tell a body cut short (`BodyTooShort`) from other socket errors.
 *
 * undici's own `headersTimeout`/`bodyTimeout` are switched off on the agent: the deadline and the
 * stall bound here are the only clocks, so `0` really means none.
 */
export class Transfer implements Dispatcher.DispatchHandler {
  readonly stallMs: number;
  readonly method: string;
  status = 0;
  rawHeaders: Buffer[] = [];
  headers: Record<string, string | string[] | undefined> = {};
  /** Bytes the body will have on the wire when known: Content-Length, or 0 for HEAD/204/304. */
  bodyLength: number | null = null;
  /** Body bytes received from the socket. */
  received = 0;
  /** Body bytes handed to the reader (or thrown away by a drain). */
  consumed = 0;
  readonly head: Promise<void>;

  #controller: Dispatcher.DispatchController | null = null;
  #hwm: number;
  #queue: Buffer[] = [];
  #queued = 0;
  #ended = false;
  #error: Error | null = null;
  #mode: Mode = 'stream';
  #limitEnd = 0;
  #stallTimer: NodeJS.Timeout | null = null;
  #headSettle: { resolve: () => void; reject: (e: Error) => void } | null = null;
  #waiter: { resolve: (v: Buffer | null) => void; reject: (e: Error) => void } | null = null;
  #end: CallEnd;

  constructor(dispatcher: Dispatcher, req: TransferRequest, limits: TransferLimits, end: CallEnd) {
    this.stallMs = limits.stallMs;
    this.method = req.method;
    this.#hwm = limits.highWaterMark;
    this.#end = end;
    this.head = new Promise<void>((resolve, reject) => (this.#headSettle = { resolve, reject }));
    // The caller awaits `head` right away; this only keeps an early failure from being reported
    // as unhandled in the meantime.
    this.head.catch(() => undefined);
    if (end.reason !== null) {
      this.#fail(end.reason);
      return;
    }
    end.onEnd(this.#onAbort);
    if (this.stallMs > 0) this.#stallTimer = setTimeout(onStall, this.stallMs, this);
    dispatcher.dispatch(
      {
        origin: req.origin,
        path: req.path,
        method: req.method as Dispatcher.HttpMethod,
        headers: req.headers as string[],
        body: req.body,
      },
      this,
    );
  }

  /** True once the whole body has arrived (the connection went back to undici's pool). */
  get ended(): boolean {
    return this.#ended;
  }

  get failed(): Error | null {
    return this.#error;
  }

  // ── undici's side ────────────────────────────────────────────────────────────────────────

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#error) controller.abort(this.#error);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (status < 200) return; // 1xx: informational, the real head follows
    this.status = status;
    this.rawHeaders = (controller.rawHeaders as Buffer[] | null) ?? [];
    this.headers = headers;
    const cl = headers['content-length'];
    if (this.method === 'HEAD' || NO_BODY_STATUS.has(status)) this.bodyLength = 0;
    else if (typeof cl === 'string' && /^\d+$/.test(cl)) this.bodyLength = Number(cl);
    this.#stallTimer?.refresh();
    const settle = this.#headSettle;
    this.#headSettle = null;
    settle?.resolve();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#error) return;
    this.received += chunk.length;
    this.#stallTimer?.refresh();
    if (this.#mode === 'drain') {
      this.consumed += chunk.length;
      if (this.received - this.#limitEnd > 0) this.#drop();
      return;
    }
    this.#queue.push(chunk);
    this.#queued += chunk.length;
    if (this.#mode === 'collect') {
      if (this.consumed + this.#queued > this.#limitEnd) {
        this.abort(
          new FetchError('BodyTooLarge', `body passed ${this.#limitEnd - this.consumed} bytes`),
        );
      }
      return;
    }
    const w = this.#waiter;
    if (w) {
      this.#waiter = null;
      w.resolve(this.#shift());
    } else if (this.#queued >= this.#hwm && !controller.paused) {
      // The reader is slow: stop reading the socket, and stop the stall clock with it — the
      // silence from here on is ours, not the server's.
      controller.pause();
      this.#stopStall();
    }
  }

  onResponseEnd(): void {
    if (this.#error) return;
    this.#ended = true;
    this.#cleanup();
    const w = this.#waiter;
    this.#waiter = null;
    if (!w) return;
    if (this.#mode === 'collect') w.resolve(this.#takeAll());
    else if (this.#mode === 'drain') w.resolve(null);
    else w.resolve(this.#queue.length ? this.#shift() : null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#fail(this.#explain(err));
  }

  // ── the reader's side ────────────────────────────────────────────────────────────────────

  /** The next chunk of body, or null at its end. */
  next(): Promise<Buffer | null> {
    if (this.#queue.length) return Promise.resolve(this.#shift());
    if (this.#error) return Promise.reject(this.#error);
    if (this.#ended) return Promise.resolve(null);
    return this.#wait();
  }

  /** Puts back the unread tail of a chunk handed out by `next`. */
  unshift(rest: Buffer): void {
    if (rest.length === 0) return;
    this.#queue.unshift(rest);
    this.#queued += rest.length;
    this.consumed -= rest.length;
  }

  /** The rest of the body in one buffer; `BodyTooLarge` past `limit` more bytes, found as early as possible. */
  collect(limit: number): Promise<Buffer> {
    if (this.#error) return Promise.reject(this.#error);
    this.#limitEnd = this.consumed + limit;
    if (this.bodyLength !== null && this.bodyLength > this.#limitEnd) {
      // Content-Length already says it is too long: fail before reading any of it.
      const err = new FetchError(
        'BodyTooLarge',
        `Content-Length ${this.bodyLength - this.consumed} is over ${limit}`,
      );
      this.abort(err);
      return Promise.reject(err);
    }
    if (this.consumed + this.#queued > this.#limitEnd) {
      const err = new FetchError('BodyTooLarge', `body passed ${limit} bytes`);
      this.abort(err);
      return Promise.reject(err);
    }
    if (this.#ended) return Promise.resolve(this.#takeAll());
    this.#mode = 'collect';
    return this.#wait() as Promise<Buffer>;
  }

  /**
   * Ends the body for reuse of the connection: with at most `maxDrain` unread (not yet handed to
   * the reader: buffered here or still on the wire) it is read to the end and thrown away, and the
   * connection goes back to the pool; otherwise the connection is dropped rather
   * than drained.
   * A body that has already arrived whole has already given its connection back to undici's pool,
   * so there is nothing left to drop. Never throws.
   */
  drain(maxDrain: number): Promise<void> {
    if (this.#ended || this.#error) {
      this.#queue.length = 0;
      this.#queued = 0;
      return Promise.resolve();
    }
    const unreadQueued = this.#queued;
    this.consumed += unreadQueued;
    this.#queue.length = 0;
    this.#queued = 0;
    if (this.bodyLength !== null && unreadQueued + (this.bodyLength - this.received) > maxDrain) {
      this.#drop();
      return Promise.resolve();
    }
    if (unreadQueued > maxDrain) {
      this.#drop();
      return Promise.resolve();
    }
    // Allowed on the wire from here: what is left of maxDrain after what was already queued.
    this.#limitEnd = this.received + (maxDrain - unreadQueued);
    this.#mode = 'drain';
    return this.#wait().then(
      () => undefined,
      () => undefined,
    );
  }

  /** Closes the connection under the body (unless it has all arrived), failing readers with `reason`. */
  abort(reason: Error): void {
    if (this.#ended) return;
    this.#fail(reason);
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────

  readonly #onAbort = (): void => {
    this.abort(this.#end.reason!);
  };

  #drop(): void {
    this.abort(new FetchError('Canceled', 'connection dropped by the client'));
  }

  #shift(): Buffer {
    const chunk = this.#queue.shift() as Buffer;
    this.#queued -= chunk.length;
    this.consumed += chunk.length;
    return chunk;
  }

  #takeAll(): Buffer {
    const all =
      this.#queue.length === 1 ? this.#queue[0]! : Buffer.concat(this.#queue, this.#queued);
    this.consumed += this.#queued;
    this.#queue = [];
    this.#queued = 0;
    return all;
  }

  /**
   * Parks the reader, then resumes a paused socket. In that order: undici's resume parses what is
   * buffered synchronously, so data — or the end — may arrive before `resume()` returns.
   */
  #wait(): Promise<Buffer | null> {
    const p = new Promise<Buffer | null>((resolve, reject) => (this.#waiter = { resolve, reject }));
    this.#resume();
    return p;
  }

  #resume(): void {
    const c = this.#controller;
    if (c?.paused) {
      if (this.stallMs > 0) this.#stallTimer = setTimeout(onStall, this.stallMs, this);
      c.resume();
    }
  }

  #stopStall(): void {
    if (this.#stallTimer) clearTimeout(this.#stallTimer);
    this.#stallTimer = null;
  }

  #cleanup(): void {
    this.#stopStall();
    this.#end.offEnd(this.#onAbort);
  }

  #fail(err: Error): void {
    if (this.#error || this.#ended) return;
    this.#error = err;
    this.#cleanup();
    // Synchronously calls onResponseError, which finds #error already set.
    this.#controller?.abort(err);
    const head = this.#headSettle;
    this.#headSettle = null;
    head?.reject(err);
    const w = this.#waiter;
    this.#waiter = null;
    if (w) w.reject(err);
  }

  /**
   * A socket that ends before the announced Content-Length surfaces from undici as a length
   * mismatch or "other side closed"; that is `BodyTooShort`, however the body is read. A reset
   * stays what it is.
   */
  #explain(err: Error): Error {
    const code = (err as { code?: unknown }).code;
    if (
      this.status !== 0 &&
      this.bodyLength !== null &&
      this.received < this.bodyLength &&
      (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'UND_ERR_SOCKET')
    ) {
      return new FetchError(
        'BodyTooShort',
        `body ended after ${this.received} of ${this.bodyLength} bytes`,
        { cause: err },
      );
    }
    return err;
  }
}
