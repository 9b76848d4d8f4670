import {
  bodyBytes,
  callLimits,
  jsonBytes,
  type BodyBytes,
  type Call,
  type JsonValue,
} from './call';
import {
  resolveClientSettings,
  type ClientSettings,
  type ResolvedClientSettings,
} from './client-settings';
import { bindEngine, Engine, type StartMode } from './engine';
import type { FetchResponse } from './response';
import type { Scope } from './scope';
import { OUTBOUND_CLIENT } from './outbound-client';
import { sendCall } from './send-call';

/** One call as a public method states it, before its URL is parsed and its body encoded. */
interface Outbound {
  readonly scope: Scope;
  readonly method: string;
  readonly url: string | URL;
  readonly call: Call;
}

/**
 * The outbound HTTP client over undici: one per program, handed to the app with
 * `app.provide(client)`. `app.listen()` starts it; a program without a server calls `start()`.
 * Every call takes the scope it runs in (a request's `Ctx` or a `Run`) first and a `Call` last.
 *
 * @example
 * const client = new Client({ timeoutMs: 5_000 });
 * client.start();
 * const res = await client.get(run, 'http://stock.internal/items/7', {});
 */
export class Client {
  readonly #engine: Engine;

  constructor(settings: ClientSettings = {}) {
    this.#engine = new Engine(resolveClientSettings(settings));
    bindEngine(this, this.#engine);
  }

  /** The settings in force, defaults filled in. */
  get settings(): ResolvedClientSettings {
    return this.#engine.settings;
  }

  /** @internal How an app finds this client among what it is provided. */
  get [OUTBOUND_CLIENT](): Client {
    return this;
  }

  /** True between `start()` and `close()`. */
  get started(): boolean {
    return this.#engine.started;
  }

  /** Starts the client (`app.listen()` does it for a provided client). `'off'` is an older name of `'none'`. Safe twice. */
  start(mode: StartMode = 'none'): void {
    this.#engine.start(mode);
  }

  /**
   * Cancels every call in flight, and every caller waiting for a permit, with `Canceled`, and
   * closes all connections. Later calls fail `Canceled` until `start()` is called again.
   */
  close(): Promise<void> {
    return this.#engine.close();
  }

  get(c: Scope, url: string | URL, call: Call = {}): Promise<FetchResponse> {
    return this.#send({ scope: c, method: 'GET', url, call }, null, null);
  }

  delete(c: Scope, url: string | URL, call: Call = {}): Promise<FetchResponse> {
    return this.#send({ scope: c, method: 'DELETE', url, call }, null, null);
  }

  post(c: Scope, url: string | URL, body: BodyBytes, call: Call = {}): Promise<FetchResponse> {
    return this.#send({ scope: c, method: 'POST', url, call }, body, null);
  }

  put(c: Scope, url: string | URL, body: BodyBytes, call: Call = {}): Promise<FetchResponse> {
    return this.#send({ scope: c, method: 'PUT', url, call }, body, null);
  }

  patch(
    c: Scope,
    url: string | URL,
    body: BodyBytes | null,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#send({ scope: c, method: 'PATCH', url, call }, body, null);
  }

  /** Any method, e.g. `send(c, 'HEAD', url, null, {})`. */
  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-34): scope, method, URL, body, call
  send(
    c: Scope,
    method: string,
    url: string | URL,
    body: BodyBytes | null,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#send({ scope: c, method, url, call }, body, null);
  }

  /** `value` as JSON under `Content-Type: application/json` (unless the call names one). Text is refused: use `post`. */
  postJson(c: Scope, url: string | URL, value: JsonValue, call: Call = {}): Promise<FetchResponse> {
    return this.#sendJson({ scope: c, method: 'POST', url, call }, value);
  }

  putJson(c: Scope, url: string | URL, value: JsonValue, call: Call = {}): Promise<FetchResponse> {
    return this.#sendJson({ scope: c, method: 'PUT', url, call }, value);
  }

  patchJson(
    c: Scope,
    url: string | URL,
    value: JsonValue,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#sendJson({ scope: c, method: 'PATCH', url, call }, value);
  }

  // eslint-disable-next-line max-params -- the spec fixes this call shape (FETCH-35): scope, method, URL, value, call
  sendJson(
    c: Scope,
    method: string,
    url: string | URL,
    value: JsonValue,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#sendJson({ scope: c, method, url, call }, value);
  }

  // Async so that a value JSON refuses comes back as a rejected promise, as every other refusal does.
  async #sendJson(out: Outbound, value: JsonValue): Promise<FetchResponse> {
    return this.#send(out, jsonBytes(value), 'application/json');
  }

  async #send(
    out: Outbound,
    body: BodyBytes | Buffer | null,
    contentType: string | null,
  ): Promise<FetchResponse> {
    const engine = this.#engine;
    const { url, call } = out;
    // A URL that does not parse surfaces as the parser's TypeError, unchanged: not ours
    // to rename.
    const u = typeof url === 'string' ? new URL(url) : url;
    return sendCall(engine, {
      scope: out.scope,
      method: out.method,
      origin: u.origin,
      path: u.pathname + u.search,
      body: bodyBytes(body),
      call,
      limits: callLimits(call, engine.settings),
      contentType,
      gate: null,
    });
  }
}
