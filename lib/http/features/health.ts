import { checkWhole } from '../../options';
import { declareOwn } from '../../json/validator';
import { IS_IN } from '../../json/validator-names';
import { toContract } from '../core/answers';
import type { Ctx } from '../request/ctx';
import { fail } from '../core/fail';
import { builtInRecord } from '../route/route-record';
import type { Capability, Host } from '../route/extensions';

/**
 * Something provided whose readiness the health route asks (an opened fetch Target, an opened cache
 * Space): found by duck typing, so lib/fetch and lib/cache need not know lib/http. `timeoutMs` is
 * the probe's deadline, for probes that can stop their own work; the route stops waiting then anyway.
 */
interface Probed {
  readonly name: string;
  probe(timeoutMs?: number): Promise<boolean>;
}
const isProbed = (s: unknown): s is Probed =>
  typeof s === 'object' &&
  s !== null &&
  typeof (s as Probed).probe === 'function' &&
  typeof (s as Probed).name === 'string';

/** `app.health({ path, cacheMs, timeoutMs })`. */
export interface HealthOptions {
  /** The route's path. Default `/healthz`. */
  readonly path?: string;
  /** How long one probe's answer (ready or not) is reused; 0 asks on every request. Default 1000 ms. */
  readonly cacheMs?: number;
  /** A probe with no answer by then counts as not ready. Default 2000 ms. */
  readonly timeoutMs?: number;
}

export const HEALTH_CACHE_MS = 1_000;
export const HEALTH_TIMEOUT_MS = 2_000;

/** The health answer: `{ "status": "ok" }`. */
export class HealthStatus {
  readonly status: 'ok';
  constructor(status: 'ok') {
    this.status = status;
  }
}
// Declared for the API description as `@IsIn(['ok'])` would, without loading class-validator.
declareOwn(HealthStatus, { status: { checks: [{ name: IS_IN, constraints: [['ok']] }] } });

const notReady = (): boolean => false;

/**
 * One probed thing's last answer and the probe in flight. Every health request reads the same
 * slot: within `cacheMs` of the last answer it is reused, and while a probe runs every request
 * waits for that one. So a flood of health requests costs each probed thing at most one probe at a
 * time and one per `cacheMs`, however many requests there are. Answers that say "not ready" are
 * cached too: a service that is down is where a flood of probes hurts most.
 */
class ProbeSlot {
  #ready = false;
  #until = 0;
  #pending: Promise<boolean> | null = null;

  constructor(
    readonly thing: Probed,
    readonly cacheMs: number,
    readonly timeoutMs: number,
  ) {}

  read(now: number): boolean | Promise<boolean> {
    if (now < this.#until) return this.#ready;
    return (this.#pending ??= this.#ask());
  }

  async #ask(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    // The route's own deadline: a probe that ignores its `timeoutMs` cannot hang the health route.
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, this.timeoutMs, false);
      timer.unref();
    });
    let ready: boolean;
    try {
      ready =
        (await Promise.race([this.thing.probe(this.timeoutMs).catch(notReady), late])) === true;
    } catch {
      ready = false;
    } finally {
      clearTimeout(timer);
    }
    this.#ready = ready;
    this.#until = Date.now() + this.cacheMs;
    this.#pending = null;
    return ready;
  }
}

class HealthCheck {
  #slots: ProbeSlot[] = [];
  #seen = -1;

  constructor(
    readonly app: Host,
    readonly cacheMs: number,
    readonly timeoutMs: number,
  ) {}

  async check(_c: Ctx): Promise<HealthStatus> {
    if (this.app.stopping) throw fail.status(503, 'server is stopping');
    const slots = this.#probed();
    const now = Date.now();
    const answers = slots.map((s) => s.read(now));
    // Awaited only when some answer is not cached: a flood inside cacheMs never waits.
    const ready = answers.every((a) => typeof a === 'boolean')
      ? (answers as boolean[])
      : await Promise.all(answers);
    let down = '';
    for (let i = 0; i < slots.length; i++)
      if (!ready[i]) down += (down ? ', ' : '') + slots[i]!.thing.name;
    if (down) throw fail.status(503, 'not ready: %s', down);
    return new HealthStatus('ok');
  }

  /** The slots of everything provided that can be probed; worked out again only when more was provided. */
  #probed(): ProbeSlot[] {
    const provided = this.app.provided;
    if (provided.length !== this.#seen) {
      const kept = new Map(this.#slots.map((s) => [s.thing, s]));
      this.#slots = provided
        .filter(isProbed)
        .map((p) => kept.get(p) ?? new ProbeSlot(p, this.cacheMs, this.timeoutMs));
      this.#seen = provided.length;
    }
    return this.#slots;
  }
}

function setting(name: string, value: number | undefined, fallback: number, least: number): number {
  if (value === undefined) return fallback;
  return checkWhole({ where: 'health' }, name, value, { unit: 'ms', min: least });
}

/** The health route as a capability: `app.health(options)` is `app.use(healthRoute(options))`. */
export function healthRoute(options: string | HealthOptions = {}): Capability {
  return { name: 'health', register: (host) => addHealthRoute(host, options) };
}

/**
 * Adds the health route: 200 `{ "status": "ok" }`; 503 naming what is down while a provided target
 * (or other probed service) is not ready, or while the server is stopping.
 */
export function addHealthRoute(app: Host, options: string | HealthOptions = {}): void {
  const o: HealthOptions = typeof options === 'string' ? { path: options } : options;
  const path = o.path ?? '/healthz';
  if (typeof path !== 'string' || !path.startsWith('/'))
    throw new TypeError(`health path must start with "/", got ${JSON.stringify(path)}`);
  const cacheMs = setting('cacheMs', o.cacheMs, HEALTH_CACHE_MS, 0);
  const timeoutMs = setting('timeoutMs', o.timeoutMs, HEALTH_TIMEOUT_MS, 1);
  const record = builtInRecord({
    path,
    name: 'health',
    controller: HealthCheck,
    key: 'check',
    summary: 'Health: 503 while a target is not ready or the server is stopping',
    tag: 'health',
    args: [{ kind: 'ctx' }],
    contract: toContract(HealthStatus),
    returnType: Promise,
    failures: [503],
  });
  app.addBuiltIn(record, new HealthCheck(app, cacheMs, timeoutMs));
}
