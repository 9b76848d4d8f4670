import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { App } from 'fw-http';
import { cleanTrees, text, tree } from './support';

afterEach(cleanTrees);

function get(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('static trees over a real socket', () => {
  it('STATIC-01 STATIC-27 STATIC-38 STATIC-50 held, gzipped, ranged and spilled files reach a real client intact', async () => {
    const page = text(5000);
    const big = Buffer.alloc(300 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 256;
    const app = new App({ log: () => {} }).staticWith(
      '/',
      tree({ 'index.html': page, 'media/big.bin': big }),
      { maxFileBytes: 256 * 1024 },
    );
    const { url } = await app.listen({ port: 0 });
    try {
      const zipped = await get(`${url}/`, { 'accept-encoding': 'gzip' });
      expect([zipped.status, zipped.headers['content-encoding']]).toEqual([200, 'gzip']);
      expect(gunzipSync(zipped.body).toString()).toBe(page);
      const part = await get(`${url}/index.html`, { range: 'bytes=10-19' });
      expect([part.status, part.body.toString()]).toEqual([206, page.slice(10, 20)]);
      const spilled = await get(`${url}/media/big.bin`, {});
      expect([spilled.status, spilled.headers['content-type'], spilled.body.equals(big)]).toEqual([
        200,
        'application/octet-stream',
        true,
      ]);
      const tail = await get(`${url}/media/big.bin`, { range: 'bytes=-1000' });
      expect([tail.status, tail.body.equals(big.subarray(-1000))]).toEqual([206, true]);
    } finally {
      await app.close();
    }
  });
});
