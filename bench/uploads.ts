// The upload cases of `npm run bench` (BENCH_ONLY=upload runs only them): a 100 MiB multipart
// upload streamed to a 0600 temp file with its SHA-256 taken, fw against raw node:http + busboy
// doing the same by hand, alternating in one run; then a 1 GiB upload into a fresh fw process,
// with its resident set before and at its peak. Each server runs in a process of its own
// (`node uploads.js fw|raw`), so the client has the other core.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, rm } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
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
  constructor(kind: Side, execPath = process.execPath) {
    this.#child = fork(__filename, [kind], {
      execPath,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.port = new Promise((r) => this.#child.once('message', (m) => r(Number(m))));
  }
  /** CPU µs (user + system) the server has used so far, and its full garbage collections. */
  async cpu(): Promise<{ us: number; majorGcs: number }> {
    this.#child.send('cpu');
    const { used, majorGcs } = await new Promise<{ used: NodeJS.CpuUsage; majorGcs: number }>((r) =>
      this.#child.once('message', (m) => r(m as never)),
    );
    return { us: used.user + used.system, majorGcs };
  }
  memory(): Promise<{ rss: number; maxRss: number }> {
    this.#child.send('rss');
    return new Promise((r) => this.#child.once('message', (m) => r(m as never)));
  }
  stop(): void {
    this.#child.kill();
  }
}

const nodeVersion = (execPath: string): string =>
  `Node ${execFileSync(execPath, ['--version'], { encoding: 'utf8' }).trim().slice(1)}`;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

/**
 * The Node 22 binary `npm run test:node22` fetches, when it is there: the upload case runs under it
 * as well, because Node 20's V8 collects differently at fw's heap size (docs/reference.md).
 */
export const NODE22 = join(
  __dirname,
  '..',
  '..',
  'node_modules',
  '.cache',
  'node22',
  'bin',
  'node',
);

/**
 * The two upload cases; their table rows. `execPath`: the node binary the servers run under
 * (this one by default), named in the rows when it is another.
 */
export async function uploadBench(rounds = 5, execPath = process.execPath): Promise<string[]> {
  const servers = {
    fw: new UploadServer('fw', execPath),
    raw: new UploadServer('raw', execPath),
    loaded: new UploadServer('loaded', execPath),
  };
  const rows: string[] = [];
  try {
    const ports = {
      fw: await servers.fw.port,
      raw: await servers.raw.port,
      loaded: await servers.loaded.port,
    };
    for (const side of SIDES) await upload(ports[side], 8 * MIB); // warm them up
    const ratios = { fw: [] as number[], loaded: [] as number[] };
    const times = { fw: [] as number[], raw: [] as number[], loaded: [] as number[] };
    // The servers' own CPU time and full garbage collections as well: what a busy machine blurs
    // least (wall time on two cores also carries the client, the kernel's loopback and the
    // disk's write-back).
    const cpu = { fw: 0, raw: 0, loaded: 0 };
    const majorGcs = { fw: 0, raw: 0, loaded: 0 };
    const timed = async (side: Side) => {
      const before = await servers[side].cpu();
      const ms = await upload(ports[side], 100 * MIB);
      const after = await servers[side].cpu();
      cpu[side] += after.us - before.us;
      majorGcs[side] += after.majorGcs - before.majorGcs;
      times[side].push(ms);
      return ms;
    };
    for (let i = 0; i < rounds; i++) {
      // A B C C B A: a drift of the machine falls on every side alike.
      const [a, b, c] = [await timed('fw'), await timed('raw'), await timed('loaded')];
      const [d, e, f] = [await timed('loaded'), await timed('raw'), await timed('fw')];
      ratios.fw.push((b + e) / (a + f));
      ratios.loaded.push((b + e) / (c + d));
    }
    const under = execPath === process.execPath ? '' : `, under ${nodeVersion(execPath)}`;
    rows.push(
      ...uploadRows({ ratios, times, cpu, majorGcs }).map((r) => r.replace(' |', `${under} |`)),
    );
  } finally {
    for (const side of SIDES) servers[side].stop();
  }
  if (execPath === process.execPath) rows.push(await gibUpload());
  return rows;
}

interface UploadRuns {
  readonly ratios: { readonly fw: number[]; readonly loaded: number[] };
  readonly times: Record<Side, number[]>;
  readonly cpu: Record<Side, number>;
  readonly majorGcs: Record<Side, number>;
}

/** The table rows of the 100 MiB rounds. */
function uploadRows({ ratios, times, cpu, majorGcs }: UploadRuns): string[] {
  const mibs = (ms: number[]) =>
    ((100 * ms.length) / (ms.reduce((s, x) => s + x) / 1000)).toFixed(0);
  const spread = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    return {
      median: sorted[Math.floor(sorted.length / 2)]!,
      range: `${sorted[0]!.toFixed(2)}–${sorted[sorted.length - 1]!.toFixed(2)}`,
    };
  };
  const fw = spread(ratios.fw);
  const loaded = spread(ratios.loaded);
  const per = (side: Side) =>
    `${(cpu[side] / times[side].length / 1000).toFixed(0)} ms CPU, ${(majorGcs[side] / times[side].length).toFixed(1)} full GCs`;
  return [
    `| 100 MiB upload to disk (busboy, 0600 temp file, SHA-256) | ${mibs(times.fw)} MiB/s | raw node:http + busboy | ${mibs(times.raw)} MiB/s | **${fw.median.toFixed(2)}×** | ${fw.range} | ≥ 0.95× ${fw.median >= 0.95 ? '✓' : '✗'} |`,
    `| the same raw server with fw's modules loaded and unused | ${mibs(times.loaded)} MiB/s | raw node:http + busboy | ${mibs(times.raw)} MiB/s | **${loaded.median.toFixed(2)}×** | ${loaded.range} | reported |`,
    `| per upload: server CPU time, full GCs | fw ${per('fw')}; loaded ${per('loaded')} | raw node:http + busboy | ${per('raw')} | **${(cpu.raw / cpu.fw).toFixed(2)}×** CPU | | reported |`,
  ];
}

const SIDES = ['fw', 'raw', 'loaded'] as const;
type Side = (typeof SIDES)[number];

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
  if (kind === 'fw' || kind === 'raw' || kind === 'loaded') {
    // 'loaded': the raw server in a process that has loaded fw's three doors and runs none of it.
    if (kind === 'loaded')
      for (const door of ['fw-http', 'fw-http/cache', 'fw-http/fetch'])
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded, left unused on purpose
        require(door);
    let majorGcs = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        if (
          (e as unknown as { detail?: { kind?: number } }).detail?.kind ===
          constants.NODE_PERFORMANCE_GC_MAJOR
        )
          majorGcs++;
    }).observe({ entryTypes: ['gc'] });
    void (kind === 'fw' ? fwServer() : rawServer()).then((port) => process.send!(String(port)));
    process.on('message', (m) => {
      if (m === 'rss')
        process.send!({
          rss: process.memoryUsage().rss,
          maxRss: process.resourceUsage().maxRSS * 1024,
        });
      if (m === 'cpu') process.send!({ used: process.cpuUsage(), majorGcs });
    });
  } else {
    const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
    void (async () => {
      const rows = await uploadBench(rounds);
      if (existsSync(NODE22)) rows.push(...(await uploadBench(rounds, NODE22)));
      console.log('| case | fw | baseline | baseline | ratio | rounds | target |');
      console.log('|---|---|---|---|---|---|---|');
      for (const r of rows) console.log(r);
    })();
  }
}
