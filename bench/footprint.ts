// The cases measured in fresh processes rather than under a steady load: how long `require('fw-http')`
// takes, and how much memory a server holds idle and after a load. Each against its own baseline in
// the same run, median of several fresh processes, alternating (a drift of the machine's speed falls
// on every side alike).
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import type { BenchRedisUrls } from './app';
import type { ServerKind, ServerMessage } from './servers';

const run = promisify(execFile);
/** The package root: `require('fw-http')` from there resolves to the build (the package's own name). */
const ROOT = join(__dirname, '..', '..');

export interface FootprintRow {
  readonly name: string;
  readonly fw: string;
  readonly base: string;
  readonly baseValue: string;
  readonly ratio: number;
  /** The target and whether it is met, or 'reported'. */
  readonly verdict: string;
}

const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Milliseconds `require(id)` takes in a fresh node (node's own start not counted). */
async function requireTime(id: string): Promise<number> {
  const { stdout } = await run(
    process.execPath,
    [
      '-e',
      `const t = process.hrtime.bigint(); require(${JSON.stringify(id)});` +
        `process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6))`,
    ],
    { cwd: ROOT },
  );
  return Number(stdout);
}

/**
 * `require('fw-http')` against a script requiring class-validator alone (which fw itself no longer
 * loads: the bound now holds with room), and against `require('fastify')`: `spawns` fresh
 * processes of each, in turn. Target: fw within 100 ms of class-validator; the median of the
 * paired differences is what is checked.
 */
export async function coldStart(spawns: number): Promise<FootprintRow[]> {
  const ids = ['fw-http', 'class-validator', 'fastify'] as const;
  const times: Record<(typeof ids)[number], number[]> = {
    'fw-http': [],
    'class-validator': [],
    fastify: [],
  };
  for (const id of ids) await requireTime(id); // the files in the page cache
  for (let i = 0; i < spawns; i++) {
    // Rotated, so no one always runs first after a pause.
    for (let j = 0; j < ids.length; j++) {
      const id = ids[(i + j) % ids.length];
      times[id].push(await requireTime(id));
    }
  }
  const fw = median(times['fw-http']);
  const cv = median(times['class-validator']);
  const fastify = median(times.fastify);
  const over = median(times['fw-http'].map((t, i) => t - times['class-validator'][i]));
  const ms = (x: number) => `${Math.round(x)} ms`;
  return [
    {
      name: "cold start: `require('fw-http')`",
      fw: ms(fw),
      base: "`require('class-validator')` alone",
      baseValue: ms(cv),
      ratio: fw / cv,
      verdict: `≤ +100 ms: ${over >= 0 ? '+' : ''}${Math.round(over)} ms ${over <= 100 ? '✓' : '✗'}`,
    },
    {
      name: "cold start: `require('fw-http')`",
      fw: ms(fw),
      base: "`require('fastify')`",
      baseValue: ms(fastify),
      ratio: fw / fastify,
      verdict: 'reported',
    },
  ];
}

/** A server process of servers.ts, its port, and its resident set size on request. */
export class ServerProcess {
  readonly #child: ChildProcess;
  readonly port: Promise<number>;

  constructor(kind: ServerKind, redis: BenchRedisUrls = {}) {
    const urls = Object.entries(redis).flatMap(([name, url]: [string, string | undefined]) =>
      url === undefined ? [] : [`--${name}`, url],
    );
    this.#child = fork(join(__dirname, 'servers.js'), [kind, ...urls], { stdio: 'inherit' });
    this.port = new Promise((resolve, reject) => {
      this.#child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)));
      const onMessage = (m: ServerMessage) => {
        if ('port' in m) {
          this.#child.off('message', onMessage);
          resolve(m.port);
        }
      };
      this.#child.on('message', onMessage);
    });
  }

  /** The process's resident set size, in bytes. */
  rss(): Promise<number> {
    return new Promise((resolve) => {
      const onMessage = (m: ServerMessage) => {
        if ('rss' in m) {
          this.#child.off('message', onMessage);
          resolve(m.rss);
        }
      };
      this.#child.on('message', onMessage);
      this.#child.send('rss');
    });
  }

  /** The process's CPU time so far (user and system), in milliseconds: less swayed by the load. */
  cpuMs(): Promise<number> {
    return new Promise((resolve) => {
      const onMessage = (m: ServerMessage) => {
        if ('cpuMs' in m) {
          this.#child.off('message', onMessage);
          resolve(m.cpuMs);
        }
      };
      this.#child.on('message', onMessage);
      this.#child.send('cpu');
    });
  }

  stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.#child.once('exit', () => resolve());
      this.#child.kill();
    });
  }
}

type Trio = 'fw' | 'raw' | 'fastify';
const ORDER = JSON.stringify({ sku: 'abc-123', qty: 3 });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Idle and after-load RSS of one fresh server: the two routes loaded `seconds` each, 64 connections. */
export async function memoryOf(
  kind: ServerKind,
  seconds: number,
): Promise<{ idle: number; loaded: number }> {
  const server = new ServerProcess(kind);
  try {
    const port = await server.port;
    await pause(1000);
    const idle = await server.rss();
    const url = `http://127.0.0.1:${port}`;
    await autocannon({ url: `${url}/small`, connections: 64, duration: seconds });
    await autocannon({
      url: `${url}/orders`,
      method: 'POST',
      body: ORDER,
      headers: { 'content-type': 'application/json' },
      connections: 64,
      duration: seconds,
    });
    await pause(500);
    return { idle, loaded: await server.rss() };
  } finally {
    await server.stop();
  }
}

/**
 * Resident memory of the bench app (every fw case's route, no Redis) against raw node:http (the
 * same routes by hand) and Fastify (the two routes): idle one second after listening, and after
 * GET /small then POST /orders for `seconds` each. Median of `spawns` fresh processes of each.
 * Targets (issue 18): idle within 10 MB of Fastify's; after the load at most Fastify's.
 */
export async function memory(spawns: number, seconds: number): Promise<FootprintRow[]> {
  const kinds = ['fw', 'raw', 'fastify'] as const;
  const idle: Record<Trio, number[]> = { fw: [], raw: [], fastify: [] };
  const loaded: Record<Trio, number[]> = { fw: [], raw: [], fastify: [] };
  for (let i = 0; i < spawns; i++) {
    for (let j = 0; j < kinds.length; j++) {
      const kind = kinds[(i + j) % kinds.length];
      const m = await memoryOf(kind, seconds);
      idle[kind].push(m.idle);
      loaded[kind].push(m.loaded);
    }
  }
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const at = (r: Record<Trio, number[]>) => ({
    fw: median(r.fw),
    raw: median(r.raw),
    fastify: median(r.fastify),
  });
  const i = at(idle);
  const l = at(loaded);
  const overIdle = (i.fw - i.fastify) / 2 ** 20;
  return [
    {
      name: 'idle RSS, bench app',
      fw: mb(i.fw),
      base: 'raw node:http',
      baseValue: mb(i.raw),
      ratio: i.fw / i.raw,
      verdict: 'reported',
    },
    {
      name: 'idle RSS, bench app',
      fw: mb(i.fw),
      base: 'Fastify 5',
      baseValue: mb(i.fastify),
      ratio: i.fw / i.fastify,
      verdict: `≤ +10 MB: ${overIdle >= 0 ? '+' : ''}${overIdle.toFixed(0)} MB ${overIdle <= 10 ? '✓' : '✗'}`,
    },
    {
      name: 'RSS after load (GET + POST)',
      fw: mb(l.fw),
      base: 'raw node:http',
      baseValue: mb(l.raw),
      ratio: l.fw / l.raw,
      verdict: 'reported',
    },
    {
      name: 'RSS after load (GET + POST)',
      fw: mb(l.fw),
      base: 'Fastify 5',
      baseValue: mb(l.fastify),
      ratio: l.fw / l.fastify,
      verdict: `≤ 1× ${l.fw <= l.fastify ? '✓' : '✗'}`,
    },
  ];
}
