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
import { sendCall } from './send-call';

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
    return this.#send(c, 'GET', url, null, call, null);
  }

  delete(c: Scope, url: string | URL, call: Call = {}): Promise<FetchResponse> {
    return this.#send(c, 'DELETE', url, null, call, null);
  }

  post(c: Scope, url: string | URL, body: BodyBytes, call: Call = {}): Promise<FetchResponse> {
    return this.#send(c, 'POST', url, body, call, null);
  }

  put(c: Scope, url: string | URL, body: BodyBytes, call: Call = {}): Promise<FetchResponse> {
    return this.#send(c, 'PUT', url, body, call, null);
  }

  patch(
    c: Scope,
    url: string | URL,
    body: BodyBytes | null,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#send(c, 'PATCH', url, body, call, null);
  }

  /** Any method, e.g. `send(c, 'HEAD', url, null, {})`. */
  send(
    c: Scope,
    method: string,
    url: string | URL,
    body: BodyBytes | null,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#send(c, method, url, body, call, null);
  }

  /** `value` as JSON under `Content-Type: application/json` (unless the call names one). Text is refused: use `post`. */
  postJson(c: Scope, url: string | URL, value: JsonValue, call: Call = {}): Promise<FetchResponse> {
    return this.#sendJson(c, 'POST', url, value, call);
  }

  putJson(c: Scope, url: string | URL, value: JsonValue, call: Call = {}): Promise<FetchResponse> {
    return this.#sendJson(c, 'PUT', url, value, call);
  }

  patchJson(
    c: Scope,
    url: string | URL,
    value: JsonValue,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#sendJson(c, 'PATCH', url, value, call);
  }

  sendJson(
    c: Scope,
    method: string,
    url: string | URL,
    value: JsonValue,
    call: Call = {},
  ): Promise<FetchResponse> {
    return this.#sendJson(c, method, url, value, call);
  }

  async #sendJson(
    c: Scope,
    method: string,
    url: string | URL,
    value: JsonValue,
    call: Call,
  ): Promise<FetchResponse> {
    return this.#send(c, method, url, jsonBytes(value), call, 'application/json');
  }

  async #send(
    c: Scope,
    method: string,
    url: string | URL,
    body: BodyBytes | Buffer | null,
    call: Call,
    contentType: string | null,
  ): Promise<FetchResponse> {
    const engine = this.#engine;
    // A URL that does not parse surfaces as the parser's TypeError, unchanged: not ours
    // to rename.
    const u = typeof url === 'string' ? new URL(url) : url;
    return sendCall(engine, {
      scope: c,
      method,
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
