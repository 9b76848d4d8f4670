// The key as read from a request's head, and what a space remembers per process, on their own:
// the shapes a socket cannot easily send (a header array, a JS string past U+00FF through
// app.inject) and the bound on "answered, not kept" markers. The mutation run found
// these branches untested.
import { MemoryStore, Space } from 'fw-http/cache';
import { MAX_NOT_KEPT } from '../../lib/http/features/idempotency/idempotent-mark';
import {
  MAX_KEY_BYTES,
  namedKey,
  readKey,
  recordKey,
} from '../../lib/http/features/idempotency/read-key';
import { SpaceState } from '../../lib/http/features/idempotency/space-state';

/** The message of the 400 `readKey` throws, or the key it read. */
function read(header: string | string[] | undefined, raw?: string[]): string {
  try {
    return readKey(header, raw);
  } catch (e) {
    return `400 ${(e as Error).message}`;
  }
}

describe('IDEM-02 IDEM-03 readKey', () => {
  it('IDEM-02 a header array: one value is the key, two are two keys', () => {
    expect(read(['k1'])).toBe('k1');
    expect(read(['k1', 'k2'])).toBe('400 more than one Idempotency-Key');
    expect(read([])).toBe('400 Idempotency-Key missing');
    expect(read(undefined)).toBe('400 Idempotency-Key missing');
  });

  it('IDEM-02 a comma is two keys only when the head holds two key lines', () => {
    expect(read('a, b', ['Idempotency-Key', 'a', 'IDEMPOTENCY-KEY', 'b'])).toBe(
      '400 more than one Idempotency-Key',
    );
    expect(read('a, b', ['Idempotency-Key', 'a, b', 'Idempotency-Keys', 'x'])).toBe('a, b');
    expect(read('a, b', ['Idempotency-Key', 'a, b', 'Content-Type', 'x/y'])).toBe('a, b');
    expect(read('a, b')).toBe('a, b');
  });

  it('IDEM-03 the quoted form is unquoted and unescaped; blanks around are not the key', () => {
    expect(read('  k1  ')).toBe('k1');
    expect(read('"k1"')).toBe('k1');
    expect(read('"a\\"b\\\\c"')).toBe('a"b\\c');
    expect(read('"')).toBe('"');
    expect(read('""')).toBe('400 Idempotency-Key is empty');
    expect(read('   ')).toBe('400 Idempotency-Key is empty');
    expect(read('"k1')).toBe('"k1');
  });

  it(`IDEM-03 at most ${MAX_KEY_BYTES} bytes: latin1 counts a byte a char, wider chars as UTF-8`, () => {
    const tooLong = `400 Idempotency-Key longer than ${MAX_KEY_BYTES} bytes`;
    expect(read('k'.repeat(MAX_KEY_BYTES))).toBe('k'.repeat(MAX_KEY_BYTES));
    expect(read('k'.repeat(MAX_KEY_BYTES + 1))).toBe(tooLong);
    expect(read('é'.repeat(MAX_KEY_BYTES))).toBe('é'.repeat(MAX_KEY_BYTES)); // as Node reads it
    // 85 three-byte chars are 255 bytes; 86 are 258.
    expect(read('東'.repeat(85))).toBe('東'.repeat(85));
    expect(read('東'.repeat(86))).toBe(tooLong);
    expect(read('k'.repeat(252) + '東')).toBe('k'.repeat(252) + '東'); // 255 bytes
    expect(read('k'.repeat(253) + '東')).toBe(tooLong); // 256
    expect(read('k'.repeat(254) + 'é')).toBe('k'.repeat(254) + 'é');
  });

  it('the record key cannot be spelled by another (caller, key); the log names the key as sent', () => {
    expect(recordKey('a:b', 'c')).not.toBe(recordKey('a', 'b:c'));
    expect(recordKey('', 'k')).toBe('0::k');
    expect(namedKey('', 'k"1')).toBe('Idempotency-Key "k\\"1"');
    expect(namedKey('ann', 'k1')).toBe('Idempotency-Key "k1" of caller "ann"');
  });
});

describe('IDEM-15 SpaceState', () => {
  it('is one per opened space, made on first use', () => {
    const S = Space('read-key-state', { ttlSeconds: 60, maxBytes: 1024 });
    const a = S.open(new MemoryStore({ bytes: 1 << 20 }));
    const b = S.open(new MemoryStore({ bytes: 1 << 20 }));
    expect(SpaceState.of(a)).toBe(SpaceState.of(a));
    expect(SpaceState.of(a)).not.toBe(SpaceState.of(b));
  });

  it(`IDEM-15 holds at most ${MAX_NOT_KEPT} "answered, not kept" markers, the oldest going first`, () => {
    const S = Space('read-key-bound', { ttlSeconds: 60, maxBytes: 1024 });
    const state = SpaceState.of(S.open(new MemoryStore({ bytes: 1 << 20 })));
    for (let i = 0; i <= MAX_NOT_KEPT; i++) state.notKeptFor(`id${i}`, 60_000);
    expect(state.notKept.size).toBe(MAX_NOT_KEPT);
    expect(state.notKept.has('id0')).toBe(false);
    expect(state.notKept.has('id1')).toBe(true);
    expect(state.notKept.has(`id${MAX_NOT_KEPT}`)).toBe(true);
    const until = state.notKept.get('id1')!;
    expect(until - performance.now()).toBeGreaterThan(59_000);
    expect(until - performance.now()).toBeLessThanOrEqual(60_000);
  });
});
