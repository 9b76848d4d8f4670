import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { waitForDrain, type WaitEnd } from '../../lib/streams';

// The one wait for `drain` that lib/http (BodyStream, EventStream, file answers) and lib/fetch
// (Sink) share.

/** A writer that takes one byte at a time and holds each write until `release()` is called. */
function slowWriter(): { w: Writable; release: () => void } {
  let pending: (() => void) | null = null;
  const w = new Writable({
    highWaterMark: 1,
    write(_chunk, _enc, cb) {
      pending = () => cb();
    },
  });
  return { w, release: () => pending?.() };
}

const EVENTS = ['drain', 'close', 'error'] as const;
const listeners = (e: EventEmitter) => EVENTS.map((name) => e.listenerCount(name));

/** How a promise settled, once every pending callback has run. */
async function settled(p: Promise<void>): Promise<string> {
  return p.then(
    () => 'resolved',
    (e: Error) => `rejected: ${e.message}`,
  );
}

describe('waitForDrain', () => {
  const gone = () => new Error('gone');

  it('resolves on drain and takes its listeners away', async () => {
    const { w, release } = slowWriter();
    const before = listeners(w);
    expect(w.write('ab')).toBe(false);
    const wait = waitForDrain(w, gone);
    expect(listeners(w)).toEqual(before.map((n) => n + 1));
    release();
    expect(await settled(wait)).toBe('resolved');
    expect(listeners(w)).toEqual(before);
  });

  it('on close first: rejects with gone() when given, else resolves; listeners gone either way', async () => {
    for (const [g, expected] of [
      [gone, 'rejected: gone'],
      [null, 'resolved'],
    ] as const) {
      const e = new EventEmitter();
      const wait = waitForDrain(e, g);
      e.emit('close');
      expect(await settled(wait)).toBe(expected);
      expect(listeners(e)).toEqual([0, 0, 0]);
    }
  });

  it('on error first: the same, and the error is taken (no uncaught error event)', async () => {
    const e = new EventEmitter();
    const wait = waitForDrain(e, gone);
    e.emit('error', new Error('broken pipe'));
    expect(await settled(wait)).toBe('rejected: gone');
    expect(listeners(e)).toEqual([0, 0, 0]);
  });

  it('a writer destroyed already settles at once, listening to nothing', async () => {
    const { w } = slowWriter();
    w.destroy();
    const before = listeners(w);
    expect(await settled(waitForDrain(w, gone))).toBe('rejected: gone');
    expect(await settled(waitForDrain(w))).toBe('resolved');
    expect(listeners(w)).toEqual(before);
  });

  it('an end (fw/fetch call guard) ends the wait, and is let go of on drain', async () => {
    let ended: (() => void) | null = null;
    const end: WaitEnd = {
      onEnd: (fn) => void (ended = fn),
      offEnd: (fn) => void (ended === fn && (ended = null)),
    };
    const e = new EventEmitter();
    const wait = waitForDrain(e, null, end);
    expect(ended).not.toBeNull();
    ended!();
    expect(await settled(wait)).toBe('resolved');
    expect(ended).toBeNull();
    expect(listeners(e)).toEqual([0, 0, 0]);

    const drained = waitForDrain(e, gone, end);
    e.emit('drain');
    expect(await settled(drained)).toBe('resolved');
    expect(ended).toBeNull();
  });
});
