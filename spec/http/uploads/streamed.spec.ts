import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { IsString } from 'class-validator';
import { App, Controller, Form, Idempotent, Post, RefusalError, Returns, Status } from 'fw-http';
import { FormFile, StreamedFile } from 'fw-http/uploads';
import { MemoryStore, Space } from 'fw-http/cache';
import { multipart, post } from '../../support/multipart';

class Piped {
  @IsString() note!: string;
  @FormFile({ stream: true, maxBytes: 4 << 20 }) file!: StreamedFile;
}

/** A slow sink: what object storage on a slow link looks like to the handler. */
function slowSink(seen: { bytes: number }): Writable {
  return new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _e, done) {
      seen.bytes += chunk.length;
      setTimeout(done, 2);
    },
    final(done) {
      done();
    },
  });
}

const seen = { bytes: 0 };

@Controller()
class Streams {
  @Post('/piped')
  @Returns(Status(201, Object))
  async piped(@Form() p: Piped) {
    const isStream = p.file instanceof StreamedFile;
    seen.bytes = 0;
    await pipeline(p.file.stream, slowSink(seen));
    const done = await p.file.done;
    return { note: p.note, isStream, name: p.file.name, ...done, piped: seen.bytes };
  }
}

const dir = mkdtempSync(join(tmpdir(), 'fw-streamed-spec-'));
let app: App;
let port = 0;
beforeAll(async () => {
  app = new App({ log: () => {}, uploads: { tmpDir: dir } }).controllers(Streams);
  port = Number(new URL((await app.listen({ port: 0 })).url).port);
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

const send = (parts: Parameters<typeof multipart>[0]) => {
  const m = multipart(parts);
  return post(port, '/piped', m.body, { 'content-type': m.type });
};

describe('@FormFile({ stream: true }): the file handed over as it arrives', () => {
  it('the handler pipes the file (through a slow sink) with its size and sha256 after; nothing on disk', async () => {
    const data = Buffer.alloc(3 << 20, 9);
    const memBefore = process.memoryUsage().rss;
    const res = await send([
      { name: 'note', value: 'hi' },
      { name: 'file', filename: 'big.bin', data },
    ]);
    expect(res.status).toBe(201);
    expect(res.json()).toEqual({
      note: 'hi',
      isStream: true,
      name: 'big.bin',
      size: data.length,
      sha256: createHash('sha256').update(data).digest('hex'),
      piped: data.length,
    });
    expect(readdirSync(dir)).toEqual([]);
    expect(process.memoryUsage().rss - memBefore).toBeLessThan(64 << 20);
  });

  it('past maxBytes the stream errors: 413 naming the limit', async () => {
    const res = await send([
      { name: 'note', value: 'hi' },
      { name: 'file', filename: 'big.bin', data: Buffer.alloc((4 << 20) + 1, 1) },
    ]);
    expect(res.status).toBe(413);
    expect(res.json()).toEqual({
      error: 'form.file: file larger than 4194304 bytes (maxBytes)',
      status: 413,
    });
  });

  it('a part after the streamed file fails the stream: 400 naming it', async () => {
    const res = await send([
      { name: 'note', value: 'hi' },
      { name: 'file', filename: 'f', data: 'abc' },
      { name: 'late', value: 'x' },
    ]);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({
      error: 'form.late: no part may follow a streamed file',
      status: 400,
    });
  });

  it('a streamed file on an @Idempotent route is refused at build, naming the field', () => {
    const Kept = Space('streamed', { ttlSeconds: 60, maxBytes: 4096 });
    @Controller()
    class Idem {
      @Post('/idem')
      @Idempotent(Kept)
      @Returns(Status(201, Object))
      take(@Form() p: Piped) {
        return { name: p.file.name };
      }
    }
    const build = () =>
      new App({ log: () => {} })
        .controllers(Idem)
        .provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })))
        .build();
    expect(build).toThrow(RefusalError);
    expect(build).toThrow(/@Idempotent cannot fingerprint the streamed file file/);
  });
});
