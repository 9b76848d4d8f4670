import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Controller, Form, Get, Post, Returns, Status } from 'fw-http';
import { FormFile, type UploadedFile } from 'fw-http/uploads';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';
import { multipart } from '../support/multipart';

// Uploads that stall mid-file, and uploads past their limit, at once against a real server. No
// assertion is timed: a temp file or a descriptor that is never let go fails the bound.

class Upload {
  @FormFile({ maxBytes: 256 * 1024 }) file!: UploadedFile;
}

@Controller()
class Uploads {
  @Post('/upload')
  @Returns(Status(201, Object))
  take(@Form() u: Upload) {
    return { size: u.file.size };
  }
  @Get('/plain')
  @Returns(String)
  plain() {
    return 'ok';
  }
}

/** Opens a connection and sends a multipart head and the first `bytes` of a `size`-byte file. */
async function begin(port: number, size: number, bytes: number): Promise<Socket> {
  const m = multipart([{ name: 'file', filename: 'f', data: Buffer.alloc(size, 1) }]);
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.resume();
  await new Promise((r) => socket.once('connect', r));
  socket.write(
    `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: ${m.type}\r\nContent-Length: ${m.body.length}\r\n\r\n`,
  );
  socket.write(m.body.subarray(0, bytes));
  return socket;
}

describe('hostile uploads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fw-hostile-uploads-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('50 uploads stalled mid-file and 50 past maxBytes: every temp file and descriptor goes, the server answers', async () => {
    const app = new App({ log: () => {}, idleTimeoutMs: 500, uploads: { tmpDir: dir } });
    app.controllers(Uploads);
    const port = Number(new URL((await app.listen({ port: 0 })).url).port);
    const fds = openDescriptors();
    const heap = await heapAfterGc();
    const sockets: Socket[] = [];
    for (let i = 0; i < 50; i++) sockets.push(await begin(port, 200 * 1024, 100 * 1024));
    for (let i = 0; i < 50; i++) sockets.push(await begin(port, 1024 * 1024, 1024 * 1024));
    // The stalled ones hold a temp file each until the idle timeout cuts them.
    expect(await settlesWithin(() => readdirSync(dir).length, 0, 15_000)).toBe(0);
    expect(await settlesWithin(openDescriptors, fds + 2, 15_000)).toBeLessThanOrEqual(fds + 2);
    expect((await getOnce(port, '/plain')).body).toBe('ok');
    expect(await heapAfterGc()).toBeLessThan(heap + 32 * 1024 * 1024);
    for (const s of sockets) s.destroy();
    await app.close();
  }, 60_000);
});
