import busboy from 'busboy';
import { PartHeads } from '../../../lib/http/request/part-heads';
import { multipart, type Part } from '../../support/multipart';

// busboy reads a part that declares no type as text/plain; PartHeads reads the part's own header
// block from the chunk busboy is reading when it hands the file over. A chunk may end anywhere:
// in a delimiter, in a header line, between the CRLFs of the blank line (busboy then hands the
// part over while reading the next chunk).

const BOUNDARY = 'heads-boundary';
const parts: Part[] = [
  { name: 'note', value: 'n' },
  { name: 'a', filename: 'a.txt', data: 'x' },
  { name: 'a', filename: 'b.txt', type: 'text/plain; charset=utf-8', data: 'y' },
  { name: 'b', filename: 'c.bin', type: 'Application/Octet-Stream', data: 'z' },
  { name: 'c', type: 'application/octet-stream', data: 'no file name' },
  { name: 'd', filename: 'd.csv', type: 'text csv', data: 'unreadable type' },
  { name: 'é', filename: 'e.txt', extra: 'Content-Type: text/csv\r\n', data: 'w' },
  { name: 'f', filename: 'f.txt', data: 'x'.repeat(100) },
];
const body = multipart(parts, BOUNDARY).body;
const expected = [
  ['a', 'text/plain', null],
  ['a', 'text/plain', 'text/plain'],
  ['b', 'application/octet-stream', 'application/octet-stream'],
  ['c', 'application/octet-stream', 'application/octet-stream'],
  ['d', 'text/plain', null],
  ['é', 'text/csv', 'text/csv'],
  ['f', 'text/plain', null],
];

/** Feeds `chunks` to a real busboy followed by PartHeads: each file's name, busboy's type, and the declared one. */
async function read(chunks: Buffer[]): Promise<unknown[]> {
  const bb = busboy({
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    defParamCharset: 'utf8',
  });
  const heads = PartHeads.follow(bb, BOUNDARY, 16 * 1024);
  const seen: unknown[] = [];
  bb.on('file', (name, stream, info) => {
    stream.resume();
    seen.push([name, info.mimeType, heads.next(name)?.declaredType]);
  });
  const closed = new Promise((resolve, reject) => bb.on('close', resolve).on('error', reject));
  for (const c of chunks) bb.write(c);
  bb.end();
  await closed;
  return seen;
}

describe('PartHeads', () => {
  it('finds each file part, in order, with the type it declared or null', async () => {
    expect(await read([body])).toEqual(expected);
  });

  it('finds the same fed one byte at a time', async () => {
    const bytes = [...body].map((b) => Buffer.from([b]));
    expect(await read(bytes)).toEqual(expected);
  });

  it('finds the same whichever byte the body is cut at into two chunks', async () => {
    for (let at = 1; at < body.length; at++)
      expect([at, await read([body.subarray(0, at), body.subarray(at)])]).toEqual([at, expected]);
  });

  it('a header block near busboy’s 16 KiB, after a file larger than what it holds, is found', async () => {
    const big = multipart(
      [
        {
          name: 'a',
          filename: 'a.bin',
          type: 'application/octet-stream',
          data: Buffer.alloc(300_000, 1),
        },
        { name: 'b', filename: 'b.txt', extra: `X-Pad: ${'p'.repeat(16_000)}\r\n`, data: 'y' },
      ],
      BOUNDARY,
    ).body;
    const chunks: Buffer[] = [];
    // 4 KiB chunks: the 16 KB header block spans five of them.
    for (let at = 0; at < big.length; at += 4096) chunks.push(big.subarray(at, at + 4096));
    expect(await read(chunks)).toEqual([
      ['a', 'application/octet-stream', 'application/octet-stream'],
      ['b', 'text/plain', null],
    ]);
  });

  it('a part it reads otherwise than busboy (a name that does not match) is undefined, not a guess', () => {
    const heads = new PartHeads(BOUNDARY, 16 * 1024);
    heads.reading(body);
    expect(heads.next('not-a')).toBeUndefined();
    expect(heads.next('a')?.declaredType).toBeNull();
  });
});
