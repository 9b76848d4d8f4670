// Issue 28 §5, beside Fastify in one run: start-to-ready (process start to first answer), idle RSS
// and RSS after load, p99 at 50 connections on GET and POST, and the resident memory 10,000 idle
// keep-alive connections hold. fw serves Fastify's two routes only (two-routes-app.ts); Fastify
// loads class-validator as well, as every fw app does (issue 28: "with the same two routes and
// class-validator loaded"); Fastify without it is reported beside. Every measure is the median of
// fresh processes or rounds, taken in turn, so a drift of the loaded machine falls on each alike.
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

/**
 * Start-to-ready of fw (two routes) against Fastify with class-validator, and Fastify alone. The
 * goal is checked on the median of the paired wall-clock differences; the process's own CPU time
 * to its first answer is printed beside (on a loaded machine it moves less than the wall clock).
 */
export async function startToReady(spawns: number): Promise<FootprintRow[]> {
  const kinds: ServerKind[] = ['fw-two', 'fastify-cv', 'fastify'];
  const wall = new Map<ServerKind, number[]>(kinds.map((k) => [k, []]));
  const cpu = new Map<ServerKind, number[]>(kinds.map((k) => [k, []]));
  for (const k of kinds) await readyIn(k); // the files in the page cache
  for (let i = 0; i < spawns; i++)
    for (let j = 0; j < kinds.length; j++) {
      const k = kinds[(i + j) % kinds.length];
      const t = await readyIn(k);
      wall.get(k)!.push(t.wall);
      cpu.get(k)!.push(t.cpu);
    }
  const at = (k: ServerKind) => ({ wall: median(wall.get(k)!), cpu: median(cpu.get(k)!) });
  const fw = at('fw-two');
  const cv = at('fastify-cv');
  const bare = at('fastify');
  const over = median(wall.get('fw-two')!.map((t, i) => t - wall.get('fastify-cv')![i]));
  const ms = (x: { wall: number; cpu: number }) =>
    `${Math.round(x.wall)} ms (CPU ${Math.round(x.cpu)} ms)`;
  return [
    {
      name: 'start-to-ready (spawn to first answer), two routes',
      fw: ms(fw),
      base: 'Fastify 5 + class-validator',
      baseValue: ms(cv),
      ratio: fw.wall / cv.wall,
      verdict: `≤ +50 ms: ${over >= 0 ? '+' : ''}${Math.round(over)} ms ${over <= 50 ? '✓' : '✗'}`,
    },
    {
      name: 'start-to-ready (spawn to first answer), two routes',
      fw: ms(fw),
      base: 'Fastify 5 alone',
      baseValue: ms(bare),
      ratio: fw.wall / bare.wall,
      verdict: 'reported',
    },
  ];
}

/**
 * Idle RSS and RSS after load, fw (two routes) against Fastify with class-validator (the goal)
 * and Fastify alone (reported).
 */
export async function twoRouteMemory(spawns: number, seconds: number): Promise<FootprintRow[]> {
  const kinds: ServerKind[] = ['fw-two', 'fastify-cv', 'fastify'];
  const idle = new Map<ServerKind, number[]>(kinds.map((k) => [k, []]));
  const loaded = new Map<ServerKind, number[]>(kinds.map((k) => [k, []]));
  for (let i = 0; i < spawns; i++)
    for (let j = 0; j < kinds.length; j++) {
      const k = kinds[(i + j) % kinds.length];
      const m = await memoryOf(k, seconds);
      idle.get(k)!.push(m.idle);
      loaded.get(k)!.push(m.loaded);
    }
  const row = (name: string, of: Map<ServerKind, number[]>, base: ServerKind): FootprintRow => {
    const fw = median(of.get('fw-two')!);
    const other = median(of.get(base)!);
    return {
      name,
      fw: mb(fw),
      base: base === 'fastify' ? 'Fastify 5 alone' : 'Fastify 5 + class-validator',
      baseValue: mb(other),
      ratio: fw / other,
      verdict: base === 'fastify' ? 'reported' : `≤ 1× ${fw <= other ? '✓' : '✗'}`,
    };
  };
  const after = 'RSS after load (GET + POST, 64 connections), two routes';
  return [
    row('idle RSS, two routes', idle, 'fastify-cv'),
    row('idle RSS, two routes', idle, 'fastify'),
    row(after, loaded, 'fastify-cv'),
    row(after, loaded, 'fastify'),
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
 * Issue 28 §5's goals, each run when `chosen` accepts its name (BENCH_ONLY): start-to-ready,
 * two routes (idle RSS and RSS after load), p99, keep-alive.
 */
export async function footprintGoals(
  chosen: (name: string) => boolean,
  o: { spawns: number; rounds: number; seconds: number },
): Promise<FootprintRow[]> {
  const rows: FootprintRow[] = [];
  if (chosen('start-to-ready')) rows.push(...(await startToReady(o.spawns)));
  if (chosen('two routes')) rows.push(...(await twoRouteMemory(3, o.seconds)));
  if (chosen('p99')) rows.push(...(await tails(o.rounds, o.seconds)));
  if (chosen('keep-alive')) rows.push(...(await idleConnections(3)));
  return rows;
}

// `node dist/bench/footprint-goals.js`: these rows alone (BENCH_ONLY picks among them).
if (require.main === module) {
  const n = (name: string, d: number) => Number(process.env[name] ?? d);
  const only = process.env.BENCH_ONLY;
  void footprintGoals((name) => !only || name.includes(only), {
    spawns: n('BENCH_SPAWNS', 11),
    rounds: n('BENCH_ROUNDS', 5),
    seconds: n('BENCH_SECONDS', 2),
  }).then((rows) => {
    console.log('| case | fw | baseline | baseline | ratio | target |');
    console.log('|---|---|---|---|---|---|');
    for (const f of rows)
      console.log(
        `| ${f.name} | ${f.fw} | ${f.base} | ${f.baseValue} | **${f.ratio.toFixed(2)}×** | ${f.verdict} |`,
      );
  });
}
