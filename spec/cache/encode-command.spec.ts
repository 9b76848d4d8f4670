import { encodeCommand } from '../../lib/cache/encode-command';

// I28.5 the lane writes each command as one RESP2 array of bulk strings, byte for byte as Redis
// reads it.

describe('encodeCommand', () => {
  it('writes the parts in order as one array: strings as UTF-8, numbers in decimal, bytes as they are', () => {
    const bytes = Buffer.from([0xff, 0x0d, 0x0a]);
    const wire = encodeCommand(['EVALSHA', 'abc'], ['2'], ['k', 'clé'], [bytes, 30_000]);
    expect(wire).toEqual(
      Buffer.concat([
        Buffer.from(
          '*7\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n2\r\n$1\r\nk\r\n$4\r\nclé\r\n$3\r\n',
          'utf8',
        ),
        bytes,
        Buffer.from('\r\n$5\r\n30000\r\n'),
      ]),
    );
  });

  it('writes the empty string, the empty buffer, an emoji key and a large value exactly', () => {
    const big = Buffer.alloc(70_000, 7);
    const wire = encodeCommand(['SET', '', Buffer.alloc(0), '🔑'], [big]);
    const head = '*5\r\n$3\r\nSET\r\n$0\r\n\r\n$0\r\n\r\n$4\r\n🔑\r\n$70000\r\n';
    expect(wire.subarray(0, Buffer.byteLength(head)).toString()).toBe(head);
    expect(wire.subarray(Buffer.byteLength(head), -2)).toEqual(big);
    expect(wire.subarray(-2).toString()).toBe('\r\n');
  });

  it('writes no arguments as an empty array', () => {
    expect(encodeCommand().toString()).toBe('*0\r\n');
  });
});

describe('encodeCommand, every kind of number and string', () => {
  it('writes whole numbers of every length, and other numbers as String() does', () => {
    const numbers = [
      0,
      7,
      9,
      10,
      99,
      100,
      999,
      1000,
      9999,
      10_000,
      99_999,
      100_000,
      30_000,
      3_600_000,
      2 ** 31 - 1,
      2 ** 31,
      999_999_999_999,
      Number.MAX_SAFE_INTEGER,
      -5,
      1.5,
      1e21,
    ];
    const wire = encodeCommand(numbers);
    const expected = `*${numbers.length}\r\n${numbers
      .map((n) => `$${String(n).length}\r\n${String(n)}\r\n`)
      .join('')}`;
    expect(wire.toString('latin1')).toBe(expected);
  });

  it('writes long strings whole, alone in a command: 1,000 ASCII units, 1,000 of Latin-1, 500 astral characters', () => {
    for (const text of ['k'.repeat(1000), 'é'.repeat(1000), '🔑'.repeat(500)]) {
      const wire = encodeCommand([text]);
      expect(wire).toEqual(Buffer.from(`*1\r\n$${Buffer.byteLength(text)}\r\n${text}\r\n`, 'utf8'));
    }
  });

  it('writes ASCII, Latin-1, and astral strings as UTF-8 with their byte lengths', () => {
    const strings = ['plain-key:1', 'é', 'ÿ\u0080', '日本', '🔑x', ''];
    const wire = encodeCommand(strings);
    const expected = `*${strings.length}\r\n${strings
      .map((s) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`)
      .join('')}`;
    expect(wire).toEqual(Buffer.from(expected, 'utf8'));
  });
});
