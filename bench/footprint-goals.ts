// The footprint beside Fastify and NestJS in one run: start-to-ready (process start to first
// answer), idle RSS and RSS after load, p99 at 50 connections on GET and POST, and the resident
// memory 10,000 idle keep-alive connections hold. fw serves Fastify's two routes only, as a zod
// app (two-routes-zod-app.ts, no class-validator loaded) and as a class-validator app
// (two-routes-app.ts); Fastify checks bodies with its own JSON schema, and runs again with
// class-validator loaded (the class-validator app's allowance is that load); Nest runs on Fastify
// with class-validator's ValidationPipe. Every measure is the median of fresh processes or rounds,
// taken in turn, so a drift of the loaded machine falls on each alike.
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import autocannon from 'autocannon';
import { ServerProcess, memoryOf, type FootprintRow } from './footprint';
import type { ServerKind } from './servers';

const ORDER = JSON.stringify({ sku: 'abc-123', qty: 3 });
const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** One GET /small; resolves once its answer has been read. */
function get(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/small', agent: false }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** Milliseconds from spawning a server process to its first answer read, and its CPU time then. */
async function readyIn(kind: ServerKind): Promise<{ wall: number; cpu: number }> {
  const started = performance.now();
  const server = new ServerProcess(kind);
  try {
    await get(await server.port);
    const wall = performance.now() - started;
    return { wall, cpu: await server.cpuMs() };
  } finally {
    await server.stop();
  }
}

/** The servers of the footprint table, and how each is named in it. */
const TABLE: readonly (readonly [ServerKind, string])[] = [
  ['fw-zod', 'fw, zod app'],
  ['fw-two', 'fw, class-validator app'],
  ['fastify', 'Fastify 5 (JSON schema)'],
  ['fastify-cv', 'Fastify 5 + class-validator loaded'],
  ['nest', 'NestJS 12 on Fastify (ValidationPipe)'],
];
const KINDS = TABLE.map(([k]) => k);
const named = (k: ServerKind) => TABLE.find(([kind]) => kind === k)![1];

/** One measure of each server per round, the rounds taken in turn. */
type Samples = Map<ServerKind, number[]>;
const samples = (): Samples => new Map(KINDS.map((k) => [k, []]));
const at = (s: Samples, k: ServerKind) => median(s.get(k)!);
/** The median of the paired differences `a - b` (each pair from one round). */
const over = (s: Samples, a: ServerKind, b: ServerKind) =>
  median(s.get(a)!.map((x, i) => x - s.get(b)![i]));
// Milliseconds whole, megabytes to a tenth (a goal of "at most Fastify's" is decided below 1 MB).
const signed = (x: number, unit: string) =>
  `${x >= 0 ? '+' : ''}${unit === 'MB' ? x.toFixed(1) : Math.round(x)} ${unit}`;

/** What startToReady measured, for the table beside the goal rows. */
export interface StartTimes {
  readonly wall: Samples;
  readonly cpu: Samples;
}

/**
 * Start-to-ready (spawn to first answer) of the five servers of TABLE, `spawns` fresh processes
 * each in turn. Goals, on the median of paired wall-clock differences: the zod app within 50 ms
 * of Fastify's; the class-validator app at most Fastify's + class-validator's own load time + 50 ms,
 * that is within 50 ms of Fastify with class-validator loaded. The process's own CPU time to its
 * first answer is printed beside (on a loaded machine it moves less than the wall clock).
 */
export async function startToReady(spawns: number): Promise<[FootprintRow[], StartTimes]> {
  const wall = samples();
  const cpu = samples();
  for (const k of KINDS) await readyIn(k); // the files in the page cache
  for (let i = 0; i < spawns; i++)
    for (let j = 0; j < KINDS.length; j++) {
      const k = KINDS[(i + j) % KINDS.length];
      const t = await readyIn(k);
      wall.get(k)!.push(t.wall);
      cpu.get(k)!.push(t.cpu);
    }
  const ms = (k: ServerKind) => `${Math.round(at(wall, k))} ms (CPU ${Math.round(at(cpu, k))} ms)`;
  const zod = over(wall, 'fw-zod', 'fastify');
  const cv = over(wall, 'fw-two', 'fastify-cv');
  const cvLoad = over(wall, 'fastify-cv', 'fastify');
  const row = (fw: ServerKind, base: ServerKind, verdict: string): FootprintRow => ({
    name: `start-to-ready (spawn to first answer), two routes, ${named(fw)}`,
    fw: ms(fw),
    base: named(base),
    baseValue: ms(base),
    ratio: at(wall, fw) / at(wall, base),
    verdict,
  });
  const rows = [
    row('fw-zod', 'fastify', `≤ +50 ms: ${signed(zod, 'ms')} ${zod <= 50 ? '✓' : '✗'}`),
    row(
      'fw-two',
      'fastify-cv',
      `≤ +50 ms over Fastify + class-validator's load (${signed(cvLoad, 'ms')}): ${signed(cv, 'ms')} ${cv <= 50 ? '✓' : '✗'}`,
    ),
    row('fw-zod', 'nest', 'reported'),
  ];
  return [rows, { wall, cpu }];
}

/** What twoRouteMemory measured, for the table beside the goal rows. */
export interface Memories {
  readonly idle: Samples;
  readonly loaded: Samples;
}

/**
 * Idle RSS and RSS after load (GET /small then POST /orders, 64 connections, `seconds` each) of
 * the servers of TABLE, `spawns` fresh processes each in turn. Goals: the zod app's idle RSS at
 * most Fastify's; the class-validator app's after load at most Fastify's + 10 MB.
 */
export async function twoRouteMemory(
  spawns: number,
  seconds: number,
): Promise<[FootprintRow[], Memories]> {
  const idle = samples();
  const loaded = samples();
  for (let i = 0; i < spawns; i++)
    for (let j = 0; j < KINDS.length; j++) {
      const k = KINDS[(i + j) % KINDS.length];
      const m = await memoryOf(k, seconds);
      idle.get(k)!.push(m.idle);
      loaded.get(k)!.push(m.loaded);
    }
  const row = (name: string, of: Samples, fw: ServerKind, verdict: string): FootprintRow => ({
    name: `${name}, two routes, ${named(fw)}`,
    fw: mb(at(of, fw)),
    base: named('fastify'),
    baseValue: mb(at(of, 'fastify')),
    ratio: at(of, fw) / at(of, 'fastify'),
    verdict,
  });
  const zodIdle = (at(idle, 'fw-zod') - at(idle, 'fastify')) / 2 ** 20;
  const cvLoaded = (at(loaded, 'fw-two') - at(loaded, 'fastify')) / 2 ** 20;
  const after = 'RSS after load (GET + POST, 64 connections)';
  const rows = [
    row('idle RSS', idle, 'fw-zod', `≤ 1×: ${signed(zodIdle, 'MB')} ${zodIdle <= 0 ? '✓' : '✗'}`),
    row(after, loaded, 'fw-zod', 'reported'),
    row('idle RSS', idle, 'fw-two', 'reported'),
    row(
      after,
      loaded,
      'fw-two',
      `≤ +10 MB: ${signed(cvLoaded, 'MB')} ${cvLoaded <= 10 ? '✓' : '✗'}`,
    ),
  ];
  return [rows, { idle, loaded }];
}

/** The footprint table: each server's start-to-ready, idle RSS and RSS after load, as measured. */
export function footprintTable(start: StartTimes | null, memory: Memories | null): string[] {
  const cell = (s: Samples | undefined, k: ServerKind, show: (x: number) => string) =>
    s === undefined ? '' : show(at(s, k));
  const ms = (x: number) => `${Math.round(x)} ms`;
  return [
    '| two routes | start-to-ready | (its CPU) | idle RSS | RSS after load |',
    '|---|---:|---:|---:|---:|',
    ...TABLE.map(
      ([k, name]) =>
        `| ${name} | ${cell(start?.wall, k, ms)} | ${cell(start?.cpu, k, ms)} | ${cell(memory?.idle, k, mb)} | ${cell(memory?.loaded, k, mb)} |`,
    ),
  ];
}

/** p99 latency (ms) of one autocannon run at 50 connections. */
async function p99(port: number, post: boolean, seconds: number): Promise<number> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${post ? '/orders' : '/small'}`,
    connections: 50,
    duration: seconds,
    ...(post
      ? { method: 'POST' as const, body: ORDER, headers: { 'content-type': 'application/json' } }
      : {}),
  });
  return r.latency.p99;
}

/** p99 at 50 connections on GET and POST, fw (two routes) against Fastify, `rounds` rounds in turn. */
export async function tails(rounds: number, seconds: number): Promise<FootprintRow[]> {
  const fw = new ServerProcess('fw-two');
  const fastify = new ServerProcess('fastify-cv');
  try {
    const ports = { fw: await fw.port, fastify: await fastify.port };
    const got = {
      fw: { get: [] as number[], post: [] as number[] },
      fastify: { get: [] as number[], post: [] as number[] },
    };
    for (const side of ['fw', 'fastify'] as const) {
      await p99(ports[side], false, 1); // warm up
      await p99(ports[side], true, 1);
    }
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? (['fw', 'fastify'] as const) : (['fastify', 'fw'] as const);
      for (const side of order) {
        got[side].get.push(await p99(ports[side], false, seconds));
        got[side].post.push(await p99(ports[side], true, seconds));
      }
    }
    const row = (what: 'get' | 'post'): FootprintRow => {
      const a = median(got.fw[what]);
      const b = median(got.fastify[what]);
      return {
        name: `p99 at 50 connections, ${what === 'get' ? 'GET /small' : 'POST /orders'}`,
        fw: `${a} ms`,
        base: 'Fastify 5',
        baseValue: `${b} ms`,
        ratio: a / Math.max(b, 1e-9),
        verdict: `≤ 1× ${a <= b ? '✓' : '✗'}`,
      };
    };
    return [row('get'), row('post')];
  } finally {
    await fw.stop();
    await fastify.stop();
  }
}

/** Opens `count` connections, each asking GET /small once and then left open, idle. */
async function openIdle(port: number, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      let head = '';
      s.setEncoding('latin1');
      s.on('error', reject);
      s.on('data', (d: string) => {
        head += d;
        // The answer's head is enough: the small body comes in the same segment.
        if (head.includes('\r\n\r\n')) resolve();
      });
      s.write('GET /small HTTP/1.1\r\nhost: bench\r\n\r\n');
    });
  for (let at = 0; at < count; at += 200) {
    const batch: Promise<void>[] = [];
    for (let i = at; i < Math.min(count, at + 200); i++) batch.push(one());
    await Promise.all(batch);
  }
  return sockets;
}

/** Resident memory per idle keep-alive connection of one fresh server process. */
async function perConnection(kind: ServerKind, count: number): Promise<number> {
  const server = new ServerProcess(kind);
  let sockets: Socket[] = [];
  try {
    const port = await server.port;
    await openIdle(port, 50).then((s) => s.forEach((x) => x.destroy())); // the code paths warm
    await pause(1000);
    const before = await server.rss();
    sockets = await openIdle(port, count);
    await pause(1000);
    const after = await server.rss();
    return (after - before) / count;
  } finally {
    for (const s of sockets) s.destroy();
    await server.stop();
  }
}

/**
 * 10,000 idle keep-alive connections: the server's resident memory per connection, fw (two
 * routes) against raw node:http, median of `spawns` fresh processes each. Both servers keep idle
 * connections for a minute (BENCH_KEEP_ALIVE_MS) so none closes while the others open.
 */
export async function idleConnections(spawns: number, count = 10_000): Promise<FootprintRow[]> {
  const kinds: ServerKind[] = ['fw-two', 'raw'];
  const per = new Map<ServerKind, number[]>(kinds.map((k) => [k, []]));
  const had = process.env.BENCH_KEEP_ALIVE_MS;
  process.env.BENCH_KEEP_ALIVE_MS = '120000'; // read by the server processes forked below
  try {
    for (let i = 0; i < spawns; i++)
      for (let j = 0; j < kinds.length; j++) {
        const k = kinds[(i + j) % kinds.length];
        per.get(k)!.push(await perConnection(k, count));
      }
  } finally {
    if (had === undefined) delete process.env.BENCH_KEEP_ALIVE_MS;
    else process.env.BENCH_KEEP_ALIVE_MS = had;
  }
  const fw = median(per.get('fw-two')!);
  const raw = median(per.get('raw')!);
  const kb = (x: number) => `${(x / 1024).toFixed(1)} KiB`;
  return [
    {
      name: `RSS per idle keep-alive connection (${count.toLocaleString('en')} open)`,
      fw: kb(fw),
      base: 'raw node:http',
      baseValue: kb(raw),
      ratio: fw / raw,
      verdict: `≤ 1.2× ${fw / raw <= 1.2 ? '✓' : '✗'}`,
    },
  ];
}

/**
 * The footprint goals beside Fastify and Nest, each run when `chosen` accepts its name
 * (BENCH_ONLY): start-to-ready, two routes (idle RSS and RSS after load), p99, keep-alive. The
 * table of the servers' start-to-ready and memory comes with the rows.
 */
export async function footprintGoals(
  chosen: (name: string) => boolean,
  o: { spawns: number; rounds: number; seconds: number },
): Promise<{ rows: FootprintRow[]; table: string[] }> {
  const rows: FootprintRow[] = [];
  let start: StartTimes | null = null;
  let memory: Memories | null = null;
  if (chosen('start-to-ready')) {
    const [r, t] = await startToReady(o.spawns);
    rows.push(...r);
    start = t;
  }
  if (chosen('two routes')) {
    const [r, m] = await twoRouteMemory(3, o.seconds);
    rows.push(...r);
    memory = m;
  }
  if (chosen('p99')) rows.push(...(await tails(o.rounds, o.seconds)));
  if (chosen('keep-alive')) rows.push(...(await idleConnections(3)));
  return { rows, table: start === null && memory === null ? [] : footprintTable(start, memory) };
}

// `npm run bench:footprint` (`node dist/bench/footprint-goals.js`): these rows alone, BENCH_ONLY
// picking among them (`BENCH_ONLY=start-to-ready`, `two routes`, `p99`, `keep-alive`).
if (require.main === module) {
  const n = (name: string, d: number) => Number(process.env[name] ?? d);
  const only = process.env.BENCH_ONLY;
  void footprintGoals((name) => !only || name.includes(only), {
    spawns: n('BENCH_SPAWNS', 11),
    rounds: n('BENCH_ROUNDS', 5),
    seconds: n('BENCH_SECONDS', 2),
  }).then(({ rows, table }) => {
    console.log(`${new Date().toISOString()}, Node ${process.version}`);
    console.log('| case | fw | baseline | baseline | ratio | target |');
    console.log('|---|---|---|---|---|---|');
    for (const f of rows)
      console.log(
        `| ${f.name} | ${f.fw} | ${f.base} | ${f.baseValue} | **${f.ratio.toFixed(2)}×** | ${f.verdict} |`,
      );
    if (table.length > 0) console.log(['', ...table].join('\n'));
  });
}
