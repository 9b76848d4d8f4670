import { readReply, type Reply } from '../../lib/cache/read-reply';

// I28.5 the lane's reader of Redis replies (RESP2), on bytes written by hand: every type, replies
// split anywhere, and what a reply not yet whole asks for.

const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');

/** Every reply in `wire`, read one after the other. */
function readAll(wire: Buffer): Reply[] {
  const out: Reply[] = [];
  for (let at = 0; at < wire.length;) {
    const read = readReply(wire, at);
    if (typeof read === 'number') throw new Error(`not whole at ${at}: needs ${read}`);
    out.push(read.value);
    at = read.end;
  }
  return out;
}

describe('readReply', () => {
  it('reads a status, an integer, a negative integer, an error, bulk strings and nil', () => {
    const [status, n, minus, err, bulk, empty, nil] = readAll(
      bytes(
        '+OK\r\n:42\r\n:-7\r\n-NOSCRIPT No matching script\r\n$5\r\nab\r\nc\r\n$0\r\n\r\n$-1\r\n',
      ),
    );
    expect(status).toBe('OK');
    expect(n).toBe(42);
    expect(minus).toBe(-7);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('NOSCRIPT No matching script');
    expect(bulk).toEqual(bytes('ab\r\nc')); // a bulk string's CR LF are its bytes, not an end
    expect(empty).toEqual(Buffer.alloc(0));
    expect(nil).toBeNull();
  });

  it('reads bytes that are not UTF-8 exactly', () => {
    const value = Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x0d, 0x0a]);
    const wire = Buffer.concat([bytes('$6\r\n'), value, bytes('\r\n')]);
    expect(readAll(wire)).toEqual([value]);
  });

  it('reads arrays: nested, holding nil and errors (a script reply of claims), empty and nil', () => {
    const [claims, nested, empty, nil] = readAll(
      bytes('*3\r\n$4\r\nheld\r\n$-1\r\n-OOM full\r\n*2\r\n*1\r\n:1\r\n:0\r\n*0\r\n*-1\r\n'),
    );
    expect(claims).toEqual([bytes('held'), null, expect.any(Error)]);
    expect(((claims as Reply[])[2] as Error).message).toBe('OOM full');
    expect(nested).toEqual([[1], 0]);
    expect(empty).toEqual([]);
    expect(nil).toBeNull();
  });

  it('a reply cut anywhere is not read: it answers a length to wait for, and reads whole once all is there', () => {
    const wire = bytes('*2\r\n$11\r\nhello world\r\n:5\r\n');
    for (let cut = 0; cut < wire.length; cut++) {
      const part = wire.subarray(0, cut);
      const read = readReply(part, 0);
      expect(typeof read).toBe('number');
      expect(read as number).toBeGreaterThan(cut);
      expect(read as number).toBeLessThanOrEqual(wire.length);
    }
    expect(readReply(wire, 0)).toEqual({ value: [bytes('hello world'), 5], end: wire.length });
  });

  it('a large bulk string not yet whole asks for its full length at once', () => {
    const head = bytes('$100000\r\n');
    const read = readReply(Buffer.concat([head, Buffer.alloc(10)]), 0);
    expect(read).toBe(head.length + 100_000 + 2);
  });

  it('a nil bulk string or array ends where the next reply starts', () => {
    expect(readAll(bytes('$-1\r\n:1\r\n*-1\r\n+OK\r\n'))).toEqual([null, 1, null, 'OK']);
  });

  it('refuses a length with a sign or a letter in its digits', () => {
    for (const wire of ['$1x\r\nab\r\n', ':1/\r\n', ':1:\r\n', '*1-\r\n'])
      expect(() => readReply(bytes(wire), 0)).toThrow(
        'Redis sent a length or integer that is not a number',
      );
  });

  it('reads from an offset, leaving the bytes before it alone', () => {
    const wire = bytes('+A\r\n:9\r\n');
    expect(readReply(wire, 4)).toEqual({ value: 9, end: 8 });
  });

  it('refuses bytes that are not RESP2: an unknown type, a length that is not a number', () => {
    expect(() => readReply(bytes('?x\r\n'), 0)).toThrow('Redis sent a reply of unknown type "?"');
    expect(() => readReply(bytes('$1x\r\n'), 0)).toThrow(
      'Redis sent a length or integer that is not a number',
    );
  });
});
