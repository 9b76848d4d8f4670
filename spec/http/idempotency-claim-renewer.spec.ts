// the ClaimRenewer as a unit, on a clock the test moves (Jest's fake timers drive both
// its interval and `performance.now()`, so every edge is reached exactly and nothing is timed).
// The mutation run left these survivors: the renewal period, the timer cleared once no claim is
// held, a confirmation arriving out of order, answers arriving after the handler ended, and the
// edge of a whole lease unconfirmed. The claims live in a real MemoryStore behind a real OpenSpace;
// only the renewals (`put` with `expect`) can be answered by the test instead (a double for this
// unit's store answers, not standing in for a real store: the stores' own contract suites and the
// idempotency specs over Redis cover those).
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { type Ctx } from 'fw-http';
import { MemoryStore, Space, type OpenSpace, type Store } from 'fw-http/cache';
import { ClaimRenewer } from '../../lib/http/features/idempotency/claim-renewer';
import type { Core } from '../../lib/http/request/exchange';
import { exchangeOf, openCtx } from '../../lib/http/request/exchange-of';
import { openIdempotency } from '../../lib/http/request/idempotency-of';

const LEASE_MS = 300;
const LABEL = 'POST /orders (Shop.order)';
const Leased = Space('renewer-unit', { ttlSeconds: 60, maxBytes: 4096, leaseMs: LEASE_MS });

type Renewed = boolean | Promise<boolean>;

interface Deferred {
  readonly promise: Promise<boolean>;
  resolve(ok: boolean): void;
  reject(e: Error): void;
}

function deferred(): Deferred {
  let resolve!: (ok: boolean) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<boolean>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/**
 * A MemoryStore whose renewals (`put` with `expect`) are counted with the time they were asked,
 * and answered in turn as `answers` says while it holds any (else by the MemoryStore itself).
 */
class Renewals {
  readonly inner = new MemoryStore({ bytes: 1 << 20 });
  /** When each renewal was asked (`performance.now()`, the test's clock). */
  readonly at: number[] = [];
  /** How the next renewals are answered, in turn (null: by the MemoryStore). */
  readonly answers: ((() => Renewed) | null)[] = [];
  readonly space: OpenSpace;

  constructor() {
    const inner = this.inner;
    const store: Store = {
      get: (k) => inner.get(k),
      putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
      put: (k, v, t, o) => {
        if (o?.expect === undefined) return inner.put(k, v, t, o);
        this.at.push(performance.now());
        const answer = this.answers.shift();
        return answer == null ? inner.put(k, v, t, o) : answer();
      },
      del: (k, o) => inner.del(k, o),
      close: () => inner.close(),
    };
    this.space = Leased.open(store);
  }

  /** The next renewal answered by a promise the test settles. */
  later(): Deferred {
    const d = deferred();
    this.answers.push(() => d.promise);
    return d;
  }

  /** The next `n` renewals fail at once (the store unavailable). */
  failing(n: number): void {
    for (let i = 0; i < n; i++)
      this.answers.push(() => {
        throw new Error('store unavailable (on purpose)');
      });
  }
}

/** A real Ctx of an idempotent request, its app's log lines in `lines` (only `log` and `shutdown` of its Core are read). */
function request(key: string, lines: string[]): Ctx {
  const req = new IncomingMessage(new Socket());
  req.method = 'POST';
  req.url = '/orders';
  const core = { log: (l: string) => lines.push(l), shutdown: new AbortController().signal };
  const c = openCtx(req, new ServerResponse(req), core as unknown as Core);
  exchangeOf(c).idempotency = openIdempotency(Leased.name, '', key);
  return c;
}

/** A handler holding its claim on `key` until `end()`; the claim was taken in the store first. */
function hold(r: Renewals, renewer: ClaimRenewer, key: string, lines: string[]) {
  const c = request(key, lines);
  const claim = Buffer.from(`claim on ${key}`);
  expect(r.space.putIfAbsent(key, claim, LEASE_MS)).toBe(true);
  let end!: () => void;
  const running = new Promise<string>((res) => (end = () => res('answered')));
  const settled = renewer.while(renewer.hold(c, key, claim, performance.now()), running);
  return {
    c,
    claim,
    /** The handler ends; resolves once the renewer let go of its claim. */
    end: async () => (end(), expect(await settled).toBe('answered')),
  };
}

const lost = (key: string) =>
  `error: ${LABEL}: claim on Idempotency-Key "${key}" was lost while the handler ran (stalled or cut off from the store past its lease of ${LEASE_MS} ms): its signal is aborted, and another instance may run the request`;
const notRenewed = (key: string) =>
  `warning: ${LABEL}: claim on Idempotency-Key "${key}" not renewed (store unavailable)`;

/** Moves the clock by `ms`, running the renewals due and the answers they were given. */
const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  jest.useFakeTimers({ now: 0, doNotFake: ['nextTick', 'setImmediate'] });
  // Node runs an interval under 1 ms every 1 ms; the fake one would run it forever at one instant
  // (and hang the spec where a period of 0 crept in). Node's rule, kept on the fake clock:
  const fake = global.setInterval;
  global.setInterval = ((fn: () => void, ms?: number) =>
    fake(fn, Math.max(1, ms ?? 0))) as unknown as typeof setInterval;
});
afterEach(() => jest.useRealTimers()); // puts the real setInterval back too

it('renewer: a claim is renewed every third of its lease (100 ms of 300), and is still held after three leases', async () => {
  const r = new Renewals();
  const lines: string[] = [];
  const h = hold(r, new ClaimRenewer(r.space, LEASE_MS, LABEL, 0), 'k1', lines);
  await advance(99);
  expect(r.at).toEqual([]);
  await advance(1);
  expect(r.at).toEqual([100]);
  await advance(800);
  expect(r.at).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900]);
  // The MemoryStore's own lease ran out at 300 without the renewals: it still holds the claim.
  expect(r.space.get('k1')).toEqual(h.claim);
  expect(lines).toEqual([]);
  expect(h.c.signal.aborted).toBe(false);
  await h.end();
});

it('renewer: the period is never below 1 ms (a lease of 2 ms is renewed every 1 ms)', async () => {
  const r = new Renewals();
  const h = hold(r, new ClaimRenewer(r.space, 2, LABEL, 0), 'k1', []);
  await advance(5);
  expect(r.at).toEqual([1, 2, 3, 4, 5]);
  await h.end();
});

it('renewer: once no claim is held its timer is gone: no renewal over three leases, and the next claim starts its own period', async () => {
  const r = new Renewals();
  const renewer = new ClaimRenewer(r.space, LEASE_MS, LABEL, 0);
  const a = hold(r, renewer, 'a', []);
  await advance(50);
  const b = hold(r, renewer, 'b', []);
  await advance(100); // 150: both renewed at 100, by the one timer
  expect(r.at).toEqual([100, 100]);
  expect(jest.getTimerCount()).toBe(1);
  await a.end();
  await advance(100); // 250: b alone renewed at 200
  expect(r.at).toEqual([100, 100, 200]);
  await b.end();
  expect(jest.getTimerCount()).toBe(0);
  await advance(3 * LEASE_MS); // 1150
  expect(r.at).toEqual([100, 100, 200]);
  // A claim made at 1150 is first renewed at 1250 (a timer left running would tick at 1200).
  const c = hold(r, renewer, 'c', []);
  await advance(99);
  expect(r.at).toEqual([100, 100, 200]);
  await advance(1);
  expect(r.at).toEqual([100, 100, 200, 1250]);
  await c.end();
  expect(jest.getTimerCount()).toBe(0);
});

it('renewer: a confirmation arriving after a newer one does not set the claim back: the lease counts from the newest', async () => {
  const r = new Renewals();
  const lines: string[] = [];
  const h = hold(r, new ClaimRenewer(r.space, LEASE_MS, LABEL, 0), 'k1', lines);
  const first = r.later(); // asked at 100
  const second = r.later(); // asked at 200
  r.failing(3); // at 300, 400 and 500
  await advance(200);
  second.resolve(true);
  await advance(0);
  first.resolve(true);
  await advance(0);
  // Confirmed as of 200: at 300 and 400 the claim is within its lease (not as of 0 or 100).
  await advance(200);
  expect(lines).toEqual([notRenewed('k1'), notRenewed('k1')]);
  expect(h.c.signal.aborted).toBe(false);
  // At 500 a whole lease has passed since 200: lost.
  await advance(100);
  expect(lines).toEqual([notRenewed('k1'), notRenewed('k1'), lost('k1')]);
  expect(h.c.signal.aborted).toBe(true);
  await h.end();
});

it('renewer: a refusal while the handler runs loses the claim: said once, its signal aborted, no renewal after', async () => {
  const r = new Renewals();
  const lines: string[] = [];
  const h = hold(r, new ClaimRenewer(r.space, LEASE_MS, LABEL, 0), 'k1', lines);
  r.answers.push(() => false);
  await advance(100);
  expect(lines).toEqual([lost('k1')]);
  expect(h.c.signal.aborted).toBe(true);
  expect(h.c.signal.reason).toMatchObject({
    code: 'LeaseLost',
    message: 'claim on Idempotency-Key "k1" was lost while the handler ran',
  });
  await advance(3 * LEASE_MS);
  expect(r.at).toEqual([100]);
  expect(jest.getTimerCount()).toBe(0);
  await h.end();
  expect(lines).toEqual([lost('k1')]);
});

it('renewer: a refusal arriving after the handler ended is no loss: no line, no abort', async () => {
  const r = new Renewals();
  const lines: string[] = [];
  const h = hold(r, new ClaimRenewer(r.space, LEASE_MS, LABEL, 0), 'k1', lines);
  const renewal = r.later();
  await advance(150); // asked at 100, unanswered
  await h.end();
  renewal.resolve(false); // the claim was given back or kept over meanwhile
  await advance(0);
  expect(lines).toEqual([]);
  expect(h.c.signal.aborted).toBe(false);
});

it('renewer: a renewal failing after the handler ended says nothing, within the lease or past it', async () => {
  const r = new Renewals();
  const lines: string[] = [];
  const h = hold(r, new ClaimRenewer(r.space, LEASE_MS, LABEL, 0), 'k1', lines);
  r.answers.push(null); // the MemoryStore confirms the renewal at 100
  const first = r.later(); // asked at 200
  const second = r.later(); // asked at 300
  await advance(350);
  await h.end();
  first.reject(new Error('connection reset (on purpose)')); // 250 ms after the last confirmation
  await advance(0);
  expect(lines).toEqual([]);
  await advance(2 * LEASE_MS);
  second.reject(new Error('connection reset (on purpose)')); // 850 ms after it
  await advance(0);
  expect(lines).toEqual([]);
  expect(h.c.signal.aborted).toBe(false);
});

it('renewer: exactly a whole lease without a confirmed renewal is lost; a millisecond less is not', async () => {
  const r = new Renewals();
  const lines: string[] = [];
  const renewer = new ClaimRenewer(r.space, LEASE_MS, LABEL, 0);
  const a = hold(r, renewer, 'a', lines); // claimed at 0: the timer ticks at 100, 200, 300
  await advance(1);
  const b = hold(r, renewer, 'b', lines); // claimed at 1
  r.failing(8);
  await advance(298); // 299: two ticks, each claim not renewed twice
  expect(lines).toEqual([notRenewed('a'), notRenewed('b'), notRenewed('a'), notRenewed('b')]);
  await advance(1); // 300: a unconfirmed for 300 ms, b for 299
  expect(lines.slice(4)).toEqual([lost('a'), notRenewed('b')]);
  expect(a.c.signal.aborted).toBe(true);
  expect(b.c.signal.aborted).toBe(false);
  await advance(100); // 400: b past its lease
  expect(lines.slice(6)).toEqual([lost('b')]);
  expect(b.c.signal.aborted).toBe(true);
  await a.end();
  await b.end();
});
