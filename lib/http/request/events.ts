import type { ServerResponse } from 'node:http';
import {
  OWN_CONTRACT,
  tag,
  toContract,
  typed,
  type AnswerOf,
  type Contract,
  type ContractLike,
} from '../core/answers';
import { HttpError, clientGone } from '../core/errors';
import { waitForDrain } from '../../streams';

/** One server-sent event: `data` is text (sent as is) or any JSON value (sent as JSON). */
export interface ServerEvent {
  /** The event's type (`event:` line); the client's `onmessage` gets events without one. */
  readonly event?: string;
  /** The event's id (`id:` line), sent back by a reconnecting client as `Last-Event-ID`. */
  readonly id?: string;
  /** How long a client waits before reconnecting, in ms (`retry:` line). */
  readonly retry?: number;
  readonly data: unknown;
}

const LINE_BREAK = /\r\n|\r|\n/;

/** How the events of `EventStream.of(T, options)` are sent. */
export interface EventStreamOptions {
  /**
   * The type every event carries (`event:` line). A browser's `EventSource` hears such events with
   * `addEventListener(event, …)`, not `onmessage`. Default: none.
   */
  readonly event?: string;
  /**
   * Each item the handler yields is `{ id, data }`, and its `id` is sent (`id:` line), so a
   * reconnecting client sends the last one back as `Last-Event-ID`. Default: false, items are the data.
   */
  readonly ids?: boolean;
}

/** One item of a typed stream: the data itself, or `{ id, data }` under `ids: true`. */
export type EventItem<T, O extends EventStreamOptions = EventStreamOptions> = O extends {
  readonly ids: true;
}
  ? { readonly id: string; readonly data: T }
  : T;

/** What the handler of `EventStream.of(T)` returns: the events, usually from an `async *` method. */
export type EventItems<I> = AsyncIterable<I> | Iterable<I>;

/**
 * A server-sent event stream (`c.events()`): `text/event-stream`, never buffered and never
 * compressed. Each `send` is written to the socket at once; it resolves when the socket can take
 * more and rejects (`Canceled`) once the client has gone. `@Returns(EventStream)` declares a route
 * that answers through `c.events()`; `@Returns(EventStream.of(T))` declares a typed stream whose
 * handler returns its events.
 * @example const events = c.events(); await events.send({ data: { n: 1 } }); events.close();
 */
export class EventStream {
  /** @internal `@Returns(EventStream)` stands for the event-stream contract */
  static readonly [OWN_CONTRACT]: Contract = tag({
    kind: 'events',
    data: null,
    event: null,
    ids: false,
  });

  /**
   * A typed event stream: the handler returns its events (an `async *` method yields them), each
   * checked against `data` (a class or a Standard Schema) and written by its declared writer, so
   * only declared fields leave. The document describes each event with OpenAPI 3.2's `itemSchema`,
   * and the typed client (`clientOf`) reads the stream as an async iterable of `T`. The stream ends
   * when the events do; a client that leaves ends the iteration (the generator's `finally` runs).
   * @example @Get('/ticks') @Returns(EventStream.of(Tick)) async *ticks() { for (let n = 1; n <= 3; n++) yield Tick.of(n); }
   */
  static of<const C extends ContractLike, const O extends EventStreamOptions = EventStreamOptions>(
    data: C,
    options?: O,
  ): Contract<EventItems<EventItem<AnswerOf<C>, O>>> {
    return typed({
      kind: 'events',
      data: toContract(data),
      event: options?.event ?? null,
      ids: options?.ids === true,
    });
  }
  readonly #res: ServerResponse;
  #open = true;
  readonly #closed: Promise<void>;

  /** @internal */
  constructor(res: ServerResponse) {
    this.#res = res;
    this.#closed = new Promise((resolve) => {
      res.once('close', () => {
        this.#open = false;
        resolve();
      });
    });
  }

  /** False once the stream was closed, by `close()` or by the client going away. */
  get open(): boolean {
    return this.#open;
  }

  /** Resolves when the stream ends, whichever side ends it. */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /** Sends one event. `data` holding line breaks is sent as several `data:` lines (the client joins them with `\n`). */
  send(event: ServerEvent): Promise<void> {
    let frame = '';
    if (event.event !== undefined) frame += `event: ${oneLine(event.event, 'event')}\n`;
    if (event.id !== undefined) frame += `id: ${oneLine(event.id, 'id')}\n`;
    if (event.retry !== undefined) frame += `retry: ${Math.max(0, Math.floor(event.retry))}\n`;
    const text =
      typeof event.data === 'string' ? event.data : (JSON.stringify(event.data) ?? 'null');
    for (const line of text.split(LINE_BREAK)) frame += `data: ${line}\n`;
    return this.#write(frame + '\n');
  }

  /** Sends a comment line, which clients ignore: a keep-alive through proxies that close quiet connections. */
  comment(text = ''): Promise<void> {
    return this.#write(
      text
        .split(LINE_BREAK)
        .map((l) => `: ${l}\n`)
        .join('') + '\n',
    );
  }

  /** Ends the stream. Closing twice, or after the client left, does nothing. */
  close(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#res.end();
  }

  #write(frame: string): Promise<void> {
    if (!this.#open || this.#res.destroyed)
      return Promise.reject(new HttpError('Canceled', 'the event stream is closed'));
    if (this.#res.write(frame)) return Promise.resolve();
    return waitForDrain(this.#res, clientGone);
  }
}

function oneLine(v: string, field: string): string {
  if (LINE_BREAK.test(v) || v.includes('\0'))
    throw new HttpError('BadHeaderValue', `event ${field} holds a line break`);
  return v;
}
