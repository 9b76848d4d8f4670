import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsString } from 'class-validator';
import { App, Controller, Ctx, Form, Post, Returns, Status } from 'fw-http';
import { FormFile, type UploadedFile } from 'fw-http/uploads';
import { emptied, multipart } from '../../support/multipart';

class Upload {
  @IsString() note!: string;
  @FormFile() file!: UploadedFile;
}

let started: () => void = () => {};
@Controller()
class Slow {
  @Post('/waits')
  @Returns(Status(201, Object))
  async waits(@Form() u: Upload, c: Ctx) {
    started();
    await c.sleep(60_000);
    return { size: u.file.size };
  }
}

/** Open descriptors of this process (Linux): what a test leaves behind shows here. */
const descriptors = () => readdirSync('/proc/self/fd').length;

/** Sends the head and the first `bytes` of a multipart body whose declared length is larger, then stops. */
async function stallAfter(port: number, bytes: number) {
  const m = multipart([
    { name: 'note', value: 'n' },
    { name: 'file', filename: 'f.bin', data: Buffer.alloc(1 << 20, 1) },
  ]);
  const socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  socket.write(
    `POST /waits HTTP/1.1\r\nHost: x\r\nContent-Type: ${m.type}\r\nContent-Length: ${m.body.length}\r\n\r\n`,
  );
  socket.write(m.body.subarray(0, bytes));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.on('error', () => {});
  socket.resume();
  return { socket, closed };
}

describe('temp files and descriptors are gone however the request ends', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fw-leftovers-spec-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a client that stops sending mid-file: the request ends within the idle timeout, no temp file or descriptor left', async () => {
    const app = new App({ log: () => {}, idleTimeoutMs: 300, uploads: { tmpDir: dir } });
    app.controllers(Slow);
    const port = Number(new URL((await app.listen({ port: 0 })).url).port);
    const before = descriptors();
    const { closed } = await stallAfter(port, 200_000);
    // The file is being written: a temp file exists until the idle timeout cuts the connection.
    for (let i = 0; i < 100 && readdirSync(dir).length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(readdirSync(dir).length).toBe(1);
    await closed; // cut by the server: the test would time out otherwise
    expect(await emptied(dir)).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(descriptors()).toBeLessThanOrEqual(before);
    await app.close();
  });

  it('a client that aborts mid-file leaves no temp file', async () => {
    const app = new App({ log: () => {}, uploads: { tmpDir: dir } }).controllers(Slow);
    const port = Number(new URL((await app.listen({ port: 0 })).url).port);
    const { socket } = await stallAfter(port, 300_000);
    for (let i = 0; i < 100 && readdirSync(dir).length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(readdirSync(dir).length).toBe(1);
    socket.destroy();
    expect(await emptied(dir)).toEqual([]);
    await app.close();
  });

  it('the server closing while the handler holds the files removes them', async () => {
    const app = new App({ log: () => {}, closeGraceMs: 100, uploads: { tmpDir: dir } });
    app.controllers(Slow);
    const port = Number(new URL((await app.listen({ port: 0 })).url).port);
    const running = new Promise<void>((r) => (started = r));
    const m = multipart([
      { name: 'note', value: 'n' },
      { name: 'file', filename: 'f.bin', data: Buffer.alloc(5000, 1) },
    ]);
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.resume();
    socket.write(
      `POST /waits HTTP/1.1\r\nHost: x\r\nContent-Type: ${m.type}\r\nContent-Length: ${m.body.length}\r\n\r\n`,
    );
    socket.write(m.body);
    await running;
    expect(readdirSync(dir).length).toBe(1);
    await app.close();
    expect(await emptied(dir)).toEqual([]);
    socket.destroy();
  });
});
