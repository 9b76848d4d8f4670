import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { App, Controller, Form, Post, Returns, Status } from 'fw-http';
import { FormFile, type UploadedFile } from 'fw-http/uploads';
import { multipart, post } from '../../support/multipart';

class Two {
  @FormFile({ maxBytes: 16 << 20 }) first!: UploadedFile;
  @FormFile({ maxBytes: 16 << 20 }) second!: UploadedFile;
}

@Controller()
class OnDisk {
  // What reached the disk, read back while the temp files still exist (they go when the answer ends).
  @Post('/disk')
  @Returns(Status(201, Object))
  disk(@Form() t: Two) {
    const read = (f: UploadedFile) => ({
      mode: statSync(f.path).mode & 0o777,
      bytes: statSync(f.path).size,
      sha256: createHash('sha256').update(readFileSync(f.path)).digest('hex'),
      told: f.sha256,
    });
    return { first: read(t.first), second: read(t.second) };
  }
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('temp files written through the 1 MiB write buffer hold the exact bytes sent', () => {
  // Random bytes larger than the buffer, so reads queue behind a write and leave in one writev:
  // a chunk written out of order or twice would change the file's SHA-256.
  it('two files of random bytes larger than the write buffer reach the disk whole and in order, 0600', async () => {
    const app = new App({ log: () => {}, uploads: { maxTotalBytes: 32 << 20 } });
    app.controllers(OnDisk);
    const port = Number(new URL((await app.listen({ port: 0 })).url).port);
    try {
      const first = randomBytes((6 << 20) + 17);
      const second = randomBytes((3 << 20) - 5);
      const m = multipart([
        { name: 'first', filename: 'a.bin', data: first },
        { name: 'second', filename: 'b.bin', data: second },
      ]);
      const got = await post(port, '/disk', m.body, { 'content-type': m.type });
      expect(got.status).toBe(201);
      const body = got.json<Record<string, Record<string, unknown>>>();
      expect(body.first).toEqual({
        mode: 0o600,
        bytes: first.length,
        sha256: sha(first),
        told: sha(first),
      });
      expect(body.second).toEqual({
        mode: 0o600,
        bytes: second.length,
        sha256: sha(second),
        told: sha(second),
      });
    } finally {
      await app.close();
    }
  });
});
