import type { Agent as UndiciAgent } from 'undici';
import { CallGuard } from './call-guard';
import type { ResolvedClientSettings } from './client-settings';
import { FetchTelemetry } from './telemetry';
import { FetchError } from './errors';
import { Gate } from './gate';
import type { Scope } from './scope';

/** `'none'`: started without a server (a script, a job). `'off'` is its older name, kept. */
export type StartMode = 'none' | 'off';

type State = 'idle' | 'started' | 'closed';

/**
 * The working parts behind a `Client`: the undici agent, the `maxInFlight` permit and the set of
 * calls in flight (so `close()` can cancel them). `Exchange` and `OpenTarget` reach it through
 * `engineOf(client)`, which is not exported from the module's door, so none of it is public API.
 */
export class Engine {
  readonly settings: ResolvedClientSettings;
  readonly permits: Gate;
  readonly active = new Set<CallGuard>();
  #agent: UndiciAgent | null = null;
  #state: State = 'idle';
  /** Spans and metrics of calls, resolved at `start()`: null while no OpenTelemetry SDK is registered. */
  telemetry: FetchTelemetry | null = null;

  constructor(settings: ResolvedClientSettings) {
    this.settings = settings;
    this.permits = new Gate(settings.maxInFlight);
  }

  get started(): boolean {
    return this.#state === 'started';
  }

  start(mode: StartMode): void {
    if (mode !== 'none' && mode !== 'off') {
      throw new FetchError(
        'BadSettings',
        `start mode must be 'none' (or its older name 'off'), got ${JSON.stringify(mode)}`,
      );
    }
    if (this.#state === 'started') return;
    this.telemetry = FetchTelemetry.resolve();
    // undici spreads `connect` into net.connect(), which takes highWaterMark (undici sets its own
    // 64 KiB there); its types do not list it, hence the variable rather than a literal.
    const connect = { keepAlive: true, highWaterMark: this.settings.readBufferSize };
    // undici (about 110 modules) loads with the first client started, not with `fw-http`: an app
    // that calls nothing out never pays for it at start or in memory.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred until a client starts
    const { Agent } = require('undici') as { Agent: typeof UndiciAgent };
    this.#agent = new Agent({
      // Our deadline and stall bound are the only clocks (see Transfer); undici's would fire
      // with its own errors at 300 s and make `timeoutMs: 0` a lie.
      headersTimeout: 0,
      bodyTimeout: 0,
      // readBufferSize is the socket's read buffer, as in the spec's client.
      connect,
    });
    this.#state = 'started';
  }

  /** Cancels every call in flight (and every caller waiting for a permit) with `Canceled`, then drops all connections. */
  async close(): Promise<void> {
    this.#state = 'closed';
    for (const guard of [...this.active])
      guard.fail(new FetchError('Canceled', 'the client was closed under the call'));
    const agent = this.#agent;
    this.#agent = null;
    if (agent) await agent.destroy();
  }

  /** The agent of a started client; otherwise `NotStarted` (or `Canceled` once closed). */
  get dispatcher(): UndiciAgent {
    if (this.#agent) return this.#agent;
    if (this.#state === 'closed') throw new FetchError('Canceled', 'the client is closed');
    throw new FetchError(
      'NotStarted',
      'call made before client.start() (app.listen() starts the provided client)',
    );
  }

  /** Opens the books of one call: throws unless started, then starts its deadline. */
  guard(scope: Scope | null, timeoutMs: number): CallGuard {
    void this.dispatcher;
    scope?.beforeCall?.();
    return new CallGuard(this.active, scope, timeoutMs);
  }

  /**
   * Takes the target's gate first, then the client's permit, so a call waiting for its target
   * holds no permit of the client's.
   */
  async admit(guard: CallGuard, gate: Gate | null): Promise<void> {
    if (gate) {
      const wait = guard.acquire(gate);
      if (wait) await wait;
    }
    const wait = guard.acquire(this.permits);
    if (wait) await wait;
  }
}

const engines = new WeakMap<object, Engine>();

export function bindEngine(owner: object, engine: Engine): void {
  engines.set(owner, engine);
}

export function engineOf(owner: object): Engine {
  const engine = engines.get(owner);
  if (!engine) throw new TypeError('not a fw/fetch Client');
  return engine;
}
