import { encodeCommand } from '../../lib/cache/encode-command';

// I28.5 the lane writes each command as one RESP2 array of bulk strings, byte for byte as Redis
// reads it.

describe('I28.5 encodeCommand', () => {
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
