import { CallGuard } from '../../lib/fetch/call-guard';
import { FetchError } from '../../lib/fetch/errors';
import { Gate } from '../../lib/fetch/gate';

const canceled = (why: string) => new FetchError('Canceled', why);

describe('CallGuard: how a call ends early', () => {
  const guards = new Set<CallGuard>();
  afterEach(() => {
    for (const g of guards) g.release();
  });
  const guard = (timeoutMs = 0, scope: { signal?: AbortSignal; requestId(): null } | null = null) =>
    new CallGuard(guards, scope, timeoutMs);

  it('runs every listener once with the first reason; a later end changes nothing', () => {
    const g = guard();
    const seen: string[] = [];
    g.onEnd(() => seen.push(`a:${g.reason?.message}`));
    g.onEnd(() => seen.push(`b:${g.reason?.message}`));
    g.fail(canceled('first'));
    g.fail(canceled('second'));
    expect(seen).toEqual(['a:Canceled: first', 'b:Canceled: first']);
    expect(g.reason?.message).toBe('Canceled: first');
    expect(() => g.throwIfAborted()).toThrow('first');
  });

  it('runs a listener added after the end at once, and never one taken off', () => {
    const g = guard();
    const off = jest.fn();
    g.onEnd(off);
    g.offEnd(off);
    g.fail(canceled('gone'));
    expect(off).not.toHaveBeenCalled();
    const late = jest.fn();
    g.onEnd(late);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('FETCH-93 a scope aborted under the call ends it Canceled; one aborted already ends it at once', () => {
    const scope = new AbortController();
    const g = guard(0, { signal: scope.signal, requestId: () => null });
    expect(g.reason).toBeNull();
    scope.abort(new Error('client went away'));
    expect(g.reason?.code).toBe('Canceled');
    const before = new AbortController();
    before.abort();
    expect(guard(0, { signal: before.signal, requestId: () => null }).reason?.code).toBe(
      'Canceled',
    );
  });

  it('a scope that ends itself on being asked (an idempotent run past its lease) is asked again as a request goes out: beforeSend ends the call Canceled before it is sent', () => {
    const scope = new AbortController();
    let reads = 0;
    const ending = {
      get signal() {
        if (++reads === 2) scope.abort(new Error('lease lost'));
        return scope.signal;
      },
      requestId: () => null,
    };
    const g = guard(0, ending);
    expect(g.reason).toBeNull();
    expect(() => g.beforeSend()).toThrow(expect.objectContaining({ code: 'Canceled' }));
    expect(reads).toBe(2);
    const quiet = guard(0, { signal: new AbortController().signal, requestId: () => null });
    expect(() => quiet.beforeSend()).not.toThrow();
  });

  it('OPEN-40 the deadline runs while the call waits for a permit, and the waiter leaves the queue', async () => {
    const gate = new Gate(1);
    const holder = guard();
    expect(holder.acquire(gate)).toBeNull();
    const waiter = guard(20);
    const waiting = waiter.acquire(gate);
    expect(gate.waiting).toBe(1);
    await expect(waiting).rejects.toMatchObject({ code: 'TimedOut' });
    expect(gate.waiting).toBe(0);
    holder.release();
    expect(gate.inUse).toBe(0);
  });

  it('FETCH-03 a queued caller gets the freed permit, and release gives back exactly what was taken', async () => {
    const gate = new Gate(1);
    const first = guard();
    void first.acquire(gate);
    const second = guard();
    const waiting = second.acquire(gate);
    first.release();
    first.release(); // twice is safe: nothing more is given back
    await expect(waiting).resolves.toBeUndefined();
    expect(gate.inUse).toBe(1);
    second.release();
    expect(gate.inUse).toBe(0);
  });
});
