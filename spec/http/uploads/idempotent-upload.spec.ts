import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsString } from 'class-validator';
import { App, Controller, Form, Idempotent, Post, Returns, Status } from 'fw-http';
import { FormFile, type UploadedFile } from 'fw-http/uploads';
import { MemoryStore, Space } from 'fw-http/cache';
import { emptied, multipart, post } from '../../support/multipart';

class Import {
  @IsString() note!: string;
  @FormFile({ maxBytes: 64 << 20 }) file!: UploadedFile;
}

const Imports = Space('imports', { ttlSeconds: 60, maxBytes: 4096 });
let runs = 0;

@Controller()
class Importer {
  @Post('/imports')
  @Idempotent(Imports)
  @Returns(Status(201, Object))
  take(@Form() i: Import) {
    runs++;
    return { run: runs, sha256: i.file.sha256, size: i.file.size };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'fw-idem-upload-spec-'));
let app: App;
let port = 0;
beforeAll(async () => {
  app = new App({ log: () => {}, uploads: { tmpDir: dir } })
    .controllers(Importer)
    .provide(Imports.open(new MemoryStore({ bytes: 1 << 20 })));
  port = Number(new URL((await app.listen({ port: 0 })).url).port);
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const upload = (key: string, data: Buffer, boundary = 'b1') => {
  const m = multipart(
    [
      { name: 'note', value: 'n' },
      { name: 'file', filename: 'f.bin', type: 'application/octet-stream', data },
    ],
    boundary,
  );
  return post(port, '/imports', m.body, { 'content-type': m.type, 'idempotency-key': key });
};

describe('an @Idempotent upload route fingerprints the streamed bytes', () => {
  it('the same file retried replays (another boundary too); another file with the key is 422', async () => {
    // 3 MiB: past the 1 MiB whole-body bound, so it can only be fingerprinted as it streams.
    const file = Buffer.alloc(3 << 20, 1);
    const first = await upload('k1', file);
    expect(first.status).toBe(201);
    expect(first.json()).toMatchObject({ run: 1, size: file.length });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await upload('k1', file, 'another-boundary');
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = Buffer.from(file);
    other[other.length - 1] = 2;
    const mismatch = await upload('k1', other);
    expect(mismatch.status).toBe(422);
    expect(mismatch.json()).toEqual({
      error: 'Idempotency-Key was used for a different request',
      status: 422,
    });
    expect(runs).toBe(1);
    expect(await emptied(dir)).toEqual([]);
  });
});
