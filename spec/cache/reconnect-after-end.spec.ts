import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { reconnectAfterEnd } from '../../lib/cache/redis/reconnect-after-end';

// The timing of reconnectAfterEnd on a fake clock, over a stand-in that has only what it uses (a
// status, connect() and events). The real failure it answers is in redis-sentinel-reconnect.spec.ts.

class Connection extends EventEmitter {
  status = 'ready';
  connects = 0;
  connect(): Promise<void> {
    this.connects += 1;
    this.status = 'connecting';
    return Promise.resolve();
  }
  end(): void {
    this.status = 'end';
    this.emit('end');
  }
}

const delays: number[] = [];
const delay = (times: number): number => {
  delays.push(times);
  return times * 100;
};

beforeEach(() => {
  jest.useFakeTimers();
  delays.length = 0;
});
afterEach(() => jest.useRealTimers());

describe('reconnectAfterEnd', () => {
  it('connects again after the delay for the n-th end in a row, and counts from 1 again once ready', () => {
    const c = new Connection();
    reconnectAfterEnd(c as unknown as Redis, () => true, delay);
    c.end();
    jest.advanceTimersByTime(99);
    expect(c.connects).toBe(0);
    jest.advanceTimersByTime(1);
    expect(c.connects).toBe(1);
    c.end();
    jest.advanceTimersByTime(199);
    expect(c.connects).toBe(1);
    jest.advanceTimersByTime(1);
    expect(c.connects).toBe(2);
    c.status = 'ready';
    c.emit('ready');
    c.end();
    jest.advanceTimersByTime(100);
    expect(c.connects).toBe(3);
    expect(delays).toEqual([1, 2, 1]);
  });

  it('one connect for ends heard before it, and none once the connection is no longer ended', () => {
    const c = new Connection();
    reconnectAfterEnd(c as unknown as Redis, () => true, delay);
    c.end();
    c.end();
    jest.advanceTimersByTime(1000);
    expect(c.connects).toBe(1);
    expect(delays).toEqual([1]); // the second end waited for the first's connect, not counted
    c.end();
    c.status = 'connecting'; // connected again by someone else meanwhile
    jest.advanceTimersByTime(1000);
    expect(c.connects).toBe(1);
  });

  it('nothing once the store is closed, whether closed before the end or while waiting to connect', () => {
    let open = false;
    const closedFirst = new Connection();
    reconnectAfterEnd(closedFirst as unknown as Redis, () => open, delay);
    closedFirst.end();
    jest.advanceTimersByTime(1000);
    expect(closedFirst.connects).toBe(0);
    expect(delays).toEqual([]); // not even waited for

    open = true;
    const closedWhileWaiting = new Connection();
    reconnectAfterEnd(closedWhileWaiting as unknown as Redis, () => open, delay);
    closedWhileWaiting.end();
    open = false;
    jest.advanceTimersByTime(1000);
    expect(closedWhileWaiting.connects).toBe(0);
  });

  it('stopped: the waiting connect is dropped and later ends are not heard', () => {
    const c = new Connection();
    const stop = reconnectAfterEnd(c as unknown as Redis, () => true, delay);
    c.end();
    stop();
    jest.advanceTimersByTime(1000);
    c.end();
    jest.advanceTimersByTime(1000);
    expect(c.connects).toBe(0);
    expect(c.listenerCount('end') + c.listenerCount('ready')).toBe(0);
  });

  it('a connect that fails is not an unhandled rejection: the end it brings is waited out again', async () => {
    const c = new Connection();
    c.connect = () => {
      c.connects += 1;
      c.status = 'end';
      return Promise.reject(new Error('Connection is closed.'));
    };
    reconnectAfterEnd(c as unknown as Redis, () => true, delay);
    c.end();
    jest.advanceTimersByTime(100);
    await Promise.resolve();
    c.emit('end'); // ioredis tells of the failed connect's end
    jest.advanceTimersByTime(200);
    expect(c.connects).toBe(2);
    expect(delays).toEqual([1, 2]);
  });
});
