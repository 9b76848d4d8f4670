import { performance } from 'node:perf_hooks';
import type { Around, AroundFactory, Capability } from '../route/extensions';
import { fail } from '../core/fail';
import { checkOneOf, checkWhole } from '../../options';
import { HttpError } from '../core/errors';
import type { OperationSink } from '../route/extensions';
import {
  RateTable,
  RATE_ADMITTED,
  type RateCount,
  type RateRule,
  type RateStore,
  type RateWindow,
} from '../../cache';
import type { Ctx } from '../request/ctx';
import type { RouteRecord } from '../route/route-record';
import { MarkKey } from '../route/mark-key';
import { markRoute } from '../route/decorators';
import { clientPrefix, RATE_IPV6_PREFIX_BITS } from './client-prefix';
import { EvictionNotice } from './eviction-notice';
import { noteOutcome } from './outcome-notes';

/** Client addresses one rate-limited route keeps windows for, unless `maxAddresses` says otherwise. */
export const RATE_MAX_ADDRESSES = 100_000;

/** What a `@RateLimit` route declares. */
export interface RateMark {
  readonly max: number;
  readonly perSeconds: number;
  /**
   * Clients the route keeps windows for at once in this process (default 100,000); past it a new
   * client takes the place of the least recently seen one, whose window is forgotten (counted in
   * `fw.rate_limit.evictions`, logged at most once a minute). A rate store over the network keeps
   * as many as it has room for.
   */
  readonly maxAddresses?: number;
  /**
   * How many leading bits of an IPv6 address name one client (default 64: a host is routinely
   * given a whole /64); 128 counts every address apart. IPv4 addresses, IPv4-mapped IPv6 among
   * them, are counted one by one.
   */
  readonly ipv6PrefixBits?: number;
  /** `'fixed'` (default): a window per address from its first request; `'sliding'`: see `RateWindow`. */
  readonly window?: RateWindow;
  /**
   * What the route does while the app's rate store cannot be reached: `'open'` (default) admits
   * the request uncounted, `'closed'` answers 503 with `Retry-After: 1`. One error line is logged
   * per outage either way. Without a rate store (counting in this process) it never applies.
   */
  readonly storeDown?: 'open' | 'closed';
}

/** The key of a route's `@RateLimit` mark: `record.marks.get(RATE)`. */
export const RATE = new MarkKey<RateMark>('rate');

/** Where `new App({ rateStore })` puts the store among the app's services, for the rate-limit step to find at build. */
export const RATE_STORE: unique symbol = Symbol('fw.rateStore');

/**
 * Allows at most `max` requests per `perSeconds` per client (429 with `Retry-After` beyond), in a
 * `'fixed'` or `'sliding'` window; a client is an IPv4 address or an IPv6 /64 (`ipv6PrefixBits`).
 * Counted in this process unless the app has a rate store (`new App({ rateStore: redisStore })`):
 * then one allowance across every instance sharing it.
 * @example
 * @Post('/login') @RateLimit({ max: 5, perSeconds: 60 }) login(@Body(Login) body: Login) { … }
 */
export function RateLimit(options: RateMark): MethodDecorator {
  return markRoute(RATE, options);
}

/** Seconds a client is told to wait while a fail-closed limit cannot reach its store. */
const STORE_DOWN_RETRY_S = '1';

/**
 * `@RateLimit({ max, perSeconds, maxAddresses?, ipv6PrefixBits?, window?, storeDown? })`: at most
 * `max` requests per client per `perSeconds`; beyond it 429 with `Retry-After` in whole seconds.
 *
 * Without a rate store the route counts in a bounded table of its own, synchronously: at most
 * `maxAddresses` clients (default 100,000); past that a new client takes the least recently seen
 * one's place (why forgetting beats refusing: see `RateTable`). With one, each request is one
 * `count` (or `hit`) on it.
 *
 * The client is `c.ip` (the socket's peer, or behind proxies the app trusts, `new App({ trustProxy
 * })`, the client they name; an untrusted peer's `X-Forwarded-For` is never read), an IPv6 one cut
 * to its first `ipv6PrefixBits` bits.
 */
const around: AroundFactory = (record, services) => {
  const mark = record.marks.get(RATE);
  if (mark === undefined) return null;
  const label = record.label;
  const owner = { where: `${label}: @RateLimit` };
  const maxKeys = checkWhole(owner, 'maxAddresses', mark.maxAddresses ?? RATE_MAX_ADDRESSES, {
    min: 1,
  });
  const window = checkOneOf(owner, 'window', mark.window ?? 'fixed', ['fixed', 'sliding']);
  const bits = checkWhole(owner, 'ipv6PrefixBits', mark.ipv6PrefixBits ?? RATE_IPV6_PREFIX_BITS, {
    min: 1,
    max: 128,
  });
  const storeDown = checkOneOf(owner, 'storeDown', mark.storeDown ?? 'open', ['open', 'closed']);
  // Checked here for both paths, so the Refusal names the route (the table's own check cannot).
  checkWhole(owner, 'max', mark.max, { min: 1 });
  const spanMs = checkWhole(owner, 'perSeconds × 1000', mark.perSeconds * 1000, {
    unit: 'ms',
    min: 1,
  });
  const route = `${record.method} ${record.path}`;
  const keyOf = (c: Ctx): string => clientPrefix(c.ip || 'unknown', bits);
  const evictions = new Evictions(route, maxKeys);
  const store = services.get(RATE_STORE) as RateStore | undefined;
  if (store !== undefined) {
    if (typeof store.hit !== 'function')
      throw new TypeError(
        `${label}: the app's rateStore has no hit(rule, key) method (a RedisStore or a MemoryRateStore has one)`,
      );
    const rule: RateRule = { name: route, max: mark.max, windowMs: spanMs, window, maxKeys };
    return overStore({ store, rule, mark, closed: storeDown === 'closed', keyOf, evictions });
  }
  const table = new RateTable({ max: mark.max, spanMs, maxKeys, window });
  return inProcess({ table, mark, keyOf, evictions });
};

/** What a limit's step is made of, beside its table or store. */
interface StepParts {
  readonly mark: RateMark;
  /** The client a request counts for. */
  readonly keyOf: (c: Ctx) => string;
  readonly evictions: Evictions;
}

/** A route's forgotten windows: counted in `fw.rate_limit.evictions`, logged at most once a minute. */
class Evictions {
  readonly #notice = new EvictionNotice();
  readonly #route: string;
  readonly #maxKeys: number;

  constructor(route: string, maxKeys: number) {
    this.#route = route;
    this.#maxKeys = maxKeys;
  }

  /** `n` windows were forgotten to make room for this request's client. */
  add(c: Ctx, n: number): void {
    for (let i = 0; i < n; i++) noteOutcome(c, 'rate_limit_eviction', 'evicted');
    const count = this.#notice.add(n, performance.now());
    if (count === 0) return;
    c.log.warn(
      { route: this.#route, evictions: count, maxAddresses: this.#maxKeys },
      `${this.#route} counts as many clients as it keeps (${this.#maxKeys}): ${count} least recently seen window(s) forgotten to serve new clients since the last line (at most one a minute); raise maxAddresses if this is ordinary traffic`,
    );
  }
}

/** The step counting in this process: synchronous, with the RateLimit headers on every answer. */
function inProcess(parts: StepParts & { readonly table: RateTable }): Around {
  const { table, mark, keyOf, evictions } = parts;
  const policy = policyOf(mark);
  return (c, proceed) => {
    const now = performance.now();
    const key = keyOf(c);
    const before = table.evictions;
    const verdict = table.take(key, now);
    if (table.evictions !== before) evictions.add(c, table.evictions - before);
    c.setHeader('ratelimit-policy', policy);
    const { remaining, resetMs } = table.standing(key, now);
    // Admitted: the window's end. Refused: when a request is let in again, which a sliding window
    // may put half a window into the next one. The table bounds both.
    const reset = Math.ceil((verdict === RATE_ADMITTED ? resetMs : table.waitMs(now)) / 1000);
    c.setHeader('ratelimit', `"default";r=${verdict === RATE_ADMITTED ? remaining : 0};t=${reset}`);
    if (verdict === RATE_ADMITTED) return proceed();
    c.setHeader('retry-after', String(reset));
    noteOutcome(c, 'rate_limit', 'over_limit');
    throw fail.tooManyRequests('at most %d requests per %d s', mark.max, mark.perSeconds);
  };
}

/**
 * Whole seconds until a window's end `ms` away, as a store said it, between 1 and the window: a
 * store's clock arithmetic can come out a hair over the span, and a 60 s window must not say t=61.
 */
export function secondsLeft(ms: number, windowSeconds: number): number {
  return Math.max(1, Math.min(windowSeconds, Math.ceil(ms / 1000)));
}

/**
 * The route's policy as the IETF draft (draft-ietf-httpapi-ratelimit-headers) spells it: quota `q`
 * per window `w` seconds, under the policy name `default`.
 */
const policyOf = (mark: RateMark): string => `"default";q=${mark.max};w=${mark.perSeconds}`;

/** Whether a store was last seen down, per store: one log line when an outage begins and one when it ends. */
const outages = new WeakMap<RateStore, { down: boolean }>();

/**
 * The step over a rate store: one `count` (or `hit`) per request; a store that fails is an
 * outage, met as the route declares. The rule is named after the route (`GET /path`), which its
 * messages name.
 */
function overStore(
  parts: StepParts & {
    readonly store: RateStore;
    readonly rule: RateRule;
    readonly closed: boolean;
  },
): (c: Ctx, proceed: () => unknown) => Promise<unknown> {
  const { store, rule, mark, closed, keyOf, evictions } = parts;
  const route = rule.name;
  let seen = outages.get(store);
  if (seen === undefined) outages.set(store, (seen = { down: false }));
  const state = seen;
  return async (c, proceed) => {
    let counted: RateCount;
    try {
      const key = keyOf(c);
      counted =
        store.count !== undefined
          ? await store.count(rule, key)
          : { waitMs: await store.hit(rule, key), remaining: -1, resetMs: 0 };
    } catch (err) {
      if (!state.down) {
        state.down = true;
        c.log.error(
          { err },
          `rate-limit store unreachable (first seen on ${route}): limits fail open or closed as each declares until it answers again`,
        );
      }
      noteOutcome(c, 'rate_limit', closed ? 'store_down_closed' : 'store_down_open');
      if (!closed) return proceed();
      c.setHeader('retry-after', STORE_DOWN_RETRY_S);
      throw new HttpError('RateStoreUnavailable', `${route}: rate-limit store unavailable`);
    }
    if (state.down) {
      state.down = false;
      c.log.info('rate-limit store answers again: counting resumed');
    }
    if ((counted.evicted ?? 0) > 0) evictions.add(c, counted.evicted!);
    c.setHeader('ratelimit-policy', policyOf(mark));
    const wait = counted.waitMs;
    if (wait === 0) {
      // A store with `hit` alone cannot say what is left (remaining -1): the policy goes alone.
      if (counted.remaining >= 0)
        c.setHeader(
          'ratelimit',
          `"default";r=${counted.remaining};t=${secondsLeft(counted.resetMs, mark.perSeconds)}`,
        );
      return proceed();
    }
    const reset = String(Math.max(1, Math.ceil(wait / 1000)));
    c.setHeader('ratelimit', `"default";r=0;t=${reset}`);
    c.setHeader('retry-after', reset);
    noteOutcome(c, 'rate_limit', 'over_limit');
    throw fail.tooManyRequests('at most %d requests per %d s', mark.max, mark.perSeconds);
  };
}

/**
 * A rate-limited route lists 429 with the Retry-After it sends, and 503 with it when it fails
 * closed (a declared answer to an outage).
 */
const describe = (record: RouteRecord, op: OperationSink): void => {
  const mark = record.marks.get(RATE);
  if (mark === undefined) return;
  const window = mark.window === 'sliding' ? ' (sliding window)' : '';
  op.failure(
    429,
    `more than ${mark.max} requests in ${mark.perSeconds} s from one address${window}`,
    {
      'Retry-After': {
        description:
          window === ''
            ? 'Seconds until the window ends'
            : 'Seconds until the request would be admitted',
        schema: { type: 'integer' },
      },
      RateLimit: {
        description: 'IETF draft: requests left (r=0) and seconds until the window ends (t)',
        schema: { type: 'string' },
        example: '"default";r=0;t=42',
      },
      'RateLimit-Policy': {
        description: 'IETF draft: the quota (q) per window of w seconds',
        schema: { type: 'string' },
        example: `"default";q=${mark.max};w=${mark.perSeconds}`,
      },
    },
  );
  if (mark.storeDown === 'closed')
    op.failure(503, 'the rate-limit store cannot be reached (this limit fails closed)', {
      'Retry-After': {
        description: 'Seconds to wait before trying again',
        schema: { type: 'integer' },
      },
    });
};

export const rateLimits: Capability = { arounds: [around], describe };
