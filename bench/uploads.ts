// The upload cases of `npm run bench` (BENCH_ONLY=upload runs only them): a 100 MiB multipart
// upload streamed to a 0600 temp file with its SHA-256 taken, fw against raw node:http + busboy
// doing the same by hand, alternating in one run; then a 1 GiB upload into a fresh fw process,
// with its resident set before and at its peak. Each server runs in a process of its own
// (`node uploads.js fw|raw`), so the client has the other core.
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, rm } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type Busboy from 'busboy';

const MIB = 1024 * 1024;
const BOUNDARY = 'fw-bench-upload-boundary';
const CHUNK = randomBytes(64 * 1024);

/** fw's upload route (upload-app.ts), loaded here only: the raw server's process loads nothing of fw. */
export async function fwServer(): Promise<number> {
  const { uploadApp } = await import('./upload-app');
  const { url } = await uploadApp().listen({ port: 0 });
  return Number(new URL(url).port);
}

/** The same by hand: busboy into a 0600 temp file, hashed as it passes, removed after the answer. */
export async function rawServer(): Promise<number> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the optional peer, as fw loads it
  const busboy = require('busboy') as typeof Busboy;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const bb = busboy({ headers: req.headers });
    const path = join(tmpdir(), `raw-upload-${randomBytes(12).toString('hex')}`);
    // The answer once the file is on disk (its last write may finish after busboy's close).
    let written: Promise<string> = Promise.resolve('{}');
    bb.on('file', (_name, stream) => {
      const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
      const hash = createHash('sha256');
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        hash.update(c);
      });
      stream.pipe(out);
      written = new Promise((resolve) =>
        out.on('finish', () => resolve(JSON.stringify({ size, sha256: hash.digest('hex') }))),
      );
    });
    bb.on(
      'close',
      () =>
        void written.then((answer) => {
          res.writeHead(201, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(answer),
          });
          res.end(answer);
          rm(path, { force: true }, () => {});
        }),
    );
    req.pipe(bb);
  });
  server.requestTimeout = 600_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** POSTs one file of `bytes` as a multipart form; resolves with the milliseconds it took. */
function upload(port: number, bytes: number): Promise<number> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/upload',
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
          'content-length': String(head.length + bytes + tail.length),
        },
      },
      (res) => {
        const got: Buffer[] = [];
        res.on('data', (c: Buffer) => got.push(c));
        res.on('end', () => {
          const body = JSON.parse(Buffer.concat(got).toString()) as { size: number };
          if (res.statusCode !== 201 || body.size !== bytes)
            reject(new Error(`upload answered ${res.statusCode}: ${JSON.stringify(body)}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.write(head);
    let left = bytes;
    const more = (): void => {
      while (left > 0) {
        const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
        left -= piece.length;
        if (!req.write(piece)) return void req.once('drain', more);
      }
      req.end(tail);
    };
    more();
  });
}

/** A server in a process of its own; answers `rss` with its resident set now and at its peak. */
class UploadServer {
  readonly #child: ChildProcess;
  readonly port: Promise<number>;
  constructor(kind: 'fw' | 'raw') {
    this.#child = fork(__filename, [kind], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.port = new Promise((r) => this.#child.once('message', (m) => r(Number(m))));
  }
  /** CPU µs (user + system) the server has used so far. */
  async cpu(): Promise<number> {
    this.#child.send('cpu');
    const used = await new Promise<NodeJS.CpuUsage>((r) =>
      this.#child.once('message', (m) => r(m as never)),
    );
    return used.user + used.system;
  }
  memory(): Promise<{ rss: number; maxRss: number }> {
    this.#child.send('rss');
    return new Promise((r) => this.#child.once('message', (m) => r(m as never)));
  }
  stop(): void {
    this.#child.kill();
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/** The two upload cases; their table rows. */
export async function uploadBench(rounds = 5): Promise<string[]> {
  const fw = new UploadServer('fw');
  const raw = new UploadServer('raw');
  const rows: string[] = [];
  try {
    const [fp, rp] = [await fw.port, await raw.port];
    await upload(fp, 8 * MIB); // warm both up
    await upload(rp, 8 * MIB);
    const ratios: number[] = [];
    const times = { fw: [] as number[], raw: [] as number[] };
    // The servers' own CPU time as well: what a busy machine blurs least (wall time on two
    // cores also carries the client, the kernel's loopback and the disk's write-back).
    const cpu = { fw: 0, raw: 0 };
    const timed = async (server: UploadServer, port: number, side: 'fw' | 'raw') => {
      const before = await server.cpu();
      const ms = await upload(port, 100 * MIB);
      cpu[side] += (await server.cpu()) - before;
      times[side].push(ms);
      return ms;
    };
    for (let i = 0; i < rounds; i++) {
      const a = await timed(fw, fp, 'fw');
      const b = await timed(raw, rp, 'raw');
      const c = await timed(raw, rp, 'raw');
      const d = await timed(fw, fp, 'fw');
      ratios.push((b + c) / (a + d));
    }
    const sorted = [...ratios].sort((x, y) => x - y);
    const median = sorted[Math.floor(sorted.length / 2)];
    const mibs = (ms: number[]) =>
      ((100 * ms.length) / (ms.reduce((s, x) => s + x) / 1000)).toFixed(0);
    rows.push(
      `| 100 MiB upload to disk (busboy, 0600 temp file, SHA-256) | ${mibs(times.fw)} MiB/s | raw node:http + busboy | ${mibs(times.raw)} MiB/s | **${median.toFixed(2)}×** | ${sorted[0]!.toFixed(2)}–${sorted[sorted.length - 1]!.toFixed(2)} | ≥ 0.95× ${median >= 0.95 ? '✓' : '✗'} |`,
      `| the same, server CPU time per upload | ${(cpu.fw / times.fw.length / 1000).toFixed(0)} ms | raw node:http + busboy | ${(cpu.raw / times.raw.length / 1000).toFixed(0)} ms | **${(cpu.raw / cpu.fw).toFixed(2)}×** | | reported |`,
    );
  } finally {
    fw.stop();
    raw.stop();
  }
  rows.push(await gibUpload());
  return rows;
}

/** A 1 GiB upload into a fresh fw process: its resident set idle and at its peak. */
async function gibUpload(): Promise<string> {
  const fw = new UploadServer('fw');
  try {
    const port = await fw.port;
    await upload(port, MIB);
    const idle = await fw.memory();
    const ms = await upload(port, 1024 * MIB);
    const after = await fw.memory();
    const above = after.maxRss - idle.rss;
    return `| 1 GiB upload, one fresh fw process | idle RSS ${mb(idle.rss)}, peak ${mb(after.maxRss)} | **${mb(above)} above idle** | ${(1024 / (ms / 1000)).toFixed(0)} MiB/s | < 100 MB ${above < 100e6 ? '✓' : '✗'} |`;
  } finally {
    fw.stop();
  }
}

if (require.main === module) {
  const kind = process.argv[2];
  if (kind === 'fw' || kind === 'raw') {
    void (kind === 'fw' ? fwServer() : rawServer()).then((port) => process.send!(String(port)));
    process.on('message', (m) => {
      if (m === 'rss')
        process.send!({
          rss: process.memoryUsage().rss,
          maxRss: process.resourceUsage().maxRSS * 1024,
        });
      if (m === 'cpu') process.send!(process.cpuUsage());
    });
  } else {
    void uploadBench(Number(process.env.BENCH_ROUNDS ?? 5)).then((rows) => {
      console.log('| case | fw | baseline | baseline | ratio | rounds | target |');
      console.log('|---|---|---|---|---|---|---|');
      for (const r of rows) console.log(r);
    });
  }
}
