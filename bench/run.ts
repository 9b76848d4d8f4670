// `npm run bench`: each fw case against a baseline doing the same work, alternating, in one run,
// on loopback. Bounded: BENCH_SECONDS (2) per run, BENCH_ROUNDS (5) rounds per case, each round
// fw, its baselines, the baselines again in reverse, fw again; the median round (by ratio) is
// reported with the range of the rounds' ratios (the noise). Each server runs in a process of its
// own (servers.ts) so the load generator (autocannon, or the outbound clients) has the other core.
// Then the footprint: cold start and memory, in fresh processes (footprint.ts), and the goals
// beside Fastify and NestJS: start-to-ready, two routes' memory, p99, idle keep-alive connections
// (footprint-goals.ts; `npm run bench:footprint` runs those alone). BENCH_ONLY=<part of
// a case's name> runs the cases whose name contains it. About 10 minutes in all.
import { existsSync } from 'node:fs';
import autocannon from 'autocannon';
import { IsInt, IsString } from 'class-validator';
import { Agent, request } from 'undici';
import { App, Body, Controller, Idempotent, Post, Returns, Run, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client } from 'fw-http/fetch';
import type { BenchRedisUrls } from './app';
import { coldStart, memory, ServerProcess, type FootprintRow } from './footprint';
import { footprintGoals } from './footprint-goals';
import { DISTINCT_FORM, ONE_KEY_FORM } from './forms';
import { startRedis, type BenchRedis } from './redis';
import { NODE22, uploadBench } from './uploads';

interface Load {
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /** A fresh Idempotency-Key per request. */
  readonly freshKey?: boolean;
  /** Connections at once (default 64). A heavy request keeps it low: requests still queued when a run ends are served during the next one. */
  readonly connections?: number;
  /** Requests written ahead on each connection before their answers (default 1: none ahead). */
  readonly pipelining?: number;
}
type On = 'raw' | 'fw' | 'fastify';
interface Base extends Load {
  /** The server: raw node:http doing the same by hand, Fastify, or another fw route. */
  readonly on: On;
  readonly label: string;
  /** fw's rate over this baseline's must reach it; 0: reported only. */
  readonly target: number;
}
/** `standalone`: a redis-server with no replica; `primary`: one with a replica linked. */
type RedisKind = 'standalone' | 'primary';
interface Case {
  readonly name: string;
  readonly fw: Load;
  /** One or two baselines, measured in the same rounds. */
  readonly bases: readonly Base[];
  /** Needs one of the bench's redis-servers (skipped, and said so, without it). */
  readonly redis?: RedisKind;
}

const ORDER = JSON.stringify({ sku: 'abc-123', qty: 3 });
const json = { 'content-type': 'application/json' };
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const VALIDATED_POST: Load = { path: '/orders', method: 'POST', body: ORDER, headers: json };
const CASES: Case[] = [
  {
    name: 'GET small JSON',
    fw: { path: '/small' },
    bases: [
      { on: 'raw', label: 'raw node:http', path: '/small', target: 0.95 },
      // Ahead of Fastify (issue 18): over 1×.
      { on: 'fastify', label: 'Fastify 5', path: '/small', target: 1 },
    ],
  },
  {
    name: 'POST validated body',
    fw: VALIDATED_POST,
    bases: [
      { on: 'raw', label: 'raw node:http', ...VALIDATED_POST, target: 0.85 },
      { on: 'fastify', label: 'Fastify 5 (JSON schema)', ...VALIDATED_POST, target: 0 },
    ],
  },
  {
    name: 'POST replayed (kept answer, memory store)',
    fw: {
      path: '/idem',
      method: 'POST',
      body: ORDER,
      headers: { ...json, 'idempotency-key': 'replayed-key' },
    },
    // The same request (key included) to a server answering the same bytes by hand.
    bases: [
      {
        on: 'raw',
        label: 'raw node:http, same bytes',
        path: '/idem',
        method: 'POST',
        body: ORDER,
        headers: { ...json, 'idempotency-key': 'replayed-key' },
        target: 0.85,
      },
    ],
  },
  {
    name: 'POST first (claim + handler + keep, memory store)',
    fw: { path: '/idem', method: 'POST', body: ORDER, headers: json, freshKey: true },
    // The baseline sends a fresh Idempotency-Key too (its route ignores it): autocannon rebuilds
    // every request once setupRequest is used, and that cost, not the server, capped the ratio.
    bases: [
      {
        on: 'fw',
        label: 'fw validated POST, same fresh key header',
        ...VALIDATED_POST,
        freshKey: true,
        target: 0.8,
      },
    ],
  },
  {
    name: 'POST first (claim + handler + keep, RedisStore)',
    fw: { path: '/idem-redis', method: 'POST', body: ORDER, headers: json, freshKey: true },
    bases: [
      {
        on: 'fw',
        label: 'fw validated POST, same fresh key header',
        ...VALIDATED_POST,
        freshKey: true,
        target: 0.6,
      },
    ],
    redis: 'standalone',
  },
  {
    // issue 23 §4: what waiting for one replica (WAIT 1) costs, beside the same POST without it.
    name: 'POST first (claim + handler + keep, RedisStore replicas: 1)',
    fw: {
      path: '/idem-redis-replicas',
      method: 'POST',
      body: ORDER,
      headers: json,
      freshKey: true,
    },
    bases: [
      {
        on: 'fw',
        label: 'the same POST on RedisStore without replicas, same primary',
        path: '/idem-redis-primary',
        method: 'POST',
        body: ORDER,
        headers: json,
        freshKey: true,
        target: 0,
      },
    ],
    redis: 'primary',
  },
  {
    name: 'GET Versioned → 304',
    fw: { path: '/versioned', headers: { 'if-none-match': 'W/"7"' } },
    bases: [
      {
        on: 'raw',
        label: 'raw node:http',
        path: '/versioned',
        headers: { 'if-none-match': 'W/"7"' },
        target: 0.9,
      },
    ],
  },
  {
    // Reading is linear: a name repeated on every piece costs about what distinct names cost.
    name: 'POST 1 MiB form, one key repeated',
    fw: { path: '/form', method: 'POST', body: ONE_KEY_FORM, headers: form, connections: 2 },
    bases: [
      {
        on: 'fw',
        label: 'fw 1 MiB form, distinct keys',
        path: '/form',
        method: 'POST',
        body: DISTINCT_FORM,
        headers: form,
        connections: 2,
        target: 0.5,
      },
    ],
  },
  {
    name: 'GET 16 KiB JSON gzipped',
    fw: { path: '/big', headers: { 'accept-encoding': 'gzip' } },
    bases: [
      {
        on: 'raw',
        label: 'raw node:http + gzipSync',
        path: '/big',
        headers: { 'accept-encoding': 'gzip' },
        target: 0.9,
      },
    ],
  },
  {
    // LIMITS-13: node:http answers pipelined requests one at a time, in order; fw adds no write.
    name: 'GET small JSON, pipelined ×16',
    fw: { path: '/small', connections: 16, pipelining: 16 },
    bases: [
      {
        on: 'raw',
        label: 'raw node:http',
        path: '/small',
        connections: 16,
        pipelining: 16,
        target: 0,
      },
    ],
  },
];

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const spawns = Number(process.env.BENCH_SPAWNS ?? 11);
const only = process.env.BENCH_ONLY;
const chosen = (name: string) => !only || name.includes(only);
let keys = 0;

async function load(port: number, l: Load): Promise<{ rps: number; p99: number; errors: number }> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${l.path}`,
    method: l.method ?? 'GET',
    body: l.body,
    headers: l.headers ?? {},
    connections: l.connections ?? 64,
    pipelining: l.pipelining ?? 1,
    duration: seconds,
    ...(l.freshKey
      ? {
          requests: [
            {
              setupRequest: (req: autocannon.Request) => ({
                ...req,
                headers: { ...req.headers, 'idempotency-key': `k${keys++}` },
              }),
            },
          ],
        }
      : {}),
  });
  await settle(port);
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

/**
 * Waits until the server answers a small GET quickly twice running (at most 10 s): requests a heavy
 * case left queued when its run ended would otherwise be served during the next run, and that
 * run, of another case or the other side, would be measured slower than it is.
 */
async function settle(port: number): Promise<void> {
  const until = performance.now() + 10_000;
  for (let quick = 0; quick < 2 && performance.now() < until;) {
    const started = performance.now();
    const res = await request(`http://127.0.0.1:${port}/small`);
    await res.body.dump();
    quick = performance.now() - started < 20 ? quick + 1 : 0;
  }
}

type Measured = Awaited<ReturnType<typeof load>>;
const mean = (x: Measured, y: Measured): Measured => ({
  rps: (x.rps + y.rps) / 2,
  p99: Math.max(x.p99, y.p99),
  errors: x.errors + y.errors,
});

type Ports = Record<On, number>;

/** One process per server kind, started for one case and stopped after it. */
async function startServers(
  redis: BenchRedisUrls,
): Promise<{ ports: Ports; stop(): Promise<void> }> {
  const servers = {
    fw: new ServerProcess('fw', redis),
    raw: new ServerProcess('raw'),
    fastify: new ServerProcess('fastify'),
  };
  const stop = () => Promise.all(Object.values(servers).map((s) => s.stop())).then(() => undefined);
  try {
    const ports: Ports = {
      fw: await servers.fw.port,
      raw: await servers.raw.port,
      fastify: await servers.fastify.port,
    };
    return { ports, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The bench's redis-servers the chosen cases need: their URLs, why a kind is missing, a stop. */
interface Redises {
  readonly urls: BenchRedisUrls;
  readonly missing: Partial<Record<RedisKind, string>>;
  stop(): Promise<void>;
}

async function httpCases(redis: Redises): Promise<string[]> {
  const rows: string[] = [];
  for (const c of CASES.filter((k) => chosen(k.name))) {
    const missing = c.redis === undefined ? undefined : redis.missing[c.redis];
    if (missing !== undefined) {
      rows.push(`| ${c.name} | | | | | | skipped: ${missing} |`);
      console.error(rows[rows.length - 1]);
      continue;
    }
    // Fresh servers for every case: the memory-store cases keep about a million records for an
    // hour, as they should, and every later fw case would be measured on that large live heap
    // (minor GCs 0.8 -> 2.8 ms) while its baselines hold nothing.
    const servers = await startServers(redis.urls);
    try {
      rows.push(...(await oneCase(c, servers.ports)));
    } finally {
      await servers.stop();
    }
  }
  return rows;
}

/** The rounds of one case against servers started for it; a row per baseline. */
async function oneCase(c: Case, ports: Ports): Promise<string[]> {
  const rows: string[] = [];
  await load(ports.fw, c.fw);
  for (const b of c.bases) await load(ports[b.on], b);
  // Each round runs fw, its baselines, the baselines again in reverse and fw again (a drift in
  // the machine's speed during the round falls on every side alike) and pairs the means; the
  // median of the rounds' ratios is steadier on a shared 2-core box than the best or the mean
  // of either side.
  const runs: { f: Measured; b: Measured[] }[] = [];
  for (let i = 0; i < rounds; i++) {
    const f1 = await load(ports.fw, c.fw);
    const first: Measured[] = [];
    for (const b of c.bases) first.push(await load(ports[b.on], b));
    const second: Measured[] = [];
    for (const b of [...c.bases].reverse()) second.unshift(await load(ports[b.on], b));
    const f2 = await load(ports.fw, c.fw);
    runs.push({ f: mean(f1, f2), b: first.map((m, j) => mean(m, second[j])) });
  }
  c.bases.forEach((b, j) => {
    const byRatio = [...runs].sort((x, y) => x.f.rps / x.b[j].rps - y.f.rps / y.b[j].rps);
    const { f: fw, b: bs } = byRatio[Math.floor(byRatio.length / 2)];
    const base = bs[j];
    const ratio = fw.rps / base.rps;
    const low = byRatio[0].f.rps / byRatio[0].b[j].rps;
    const high = byRatio[byRatio.length - 1].f.rps / byRatio[byRatio.length - 1].b[j].rps;
    const verdict = b.target
      ? b.target === 1
        ? `> 1× ${ratio > 1 ? '✓' : '✗'}` // ahead, not level
        : `≥ ${b.target}× ${ratio >= b.target ? '✓' : '✗'}`
      : 'reported';
    const bad = c.fw.path === '/versioned' ? 0 : fw.errors + base.errors; // 304s count as non-2xx
    rows.push(
      `| ${c.name} | ${Math.round(fw.rps)} | ${fw.p99} ms | ${b.label} | ${Math.round(base.rps)} | **${ratio.toFixed(2)}×** | ${low.toFixed(2)}–${high.toFixed(2)} | ${verdict} |${bad ? ` errors ${fw.errors}/${base.errors}` : ''}`,
    );
    console.error(rows[rows.length - 1]);
  });
  return rows;
}

class NewOrder {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

/** Bytes one kept record costs in the memory store: 1000 first POSTs through the real pipeline. */
async function bytesPerRecord(): Promise<number> {
  const Records = Space('records', { ttlSeconds: 3600, maxBytes: 64 * 1024 });
  const store = new MemoryStore({ bytes: 3 * 2 ** 30 });
  @Controller()
  class C {
    @Post('/o')
    @Idempotent(Records, { by: () => 'account-1' })
    @Returns(Status(201, NewOrder))
    o(@Body() o: NewOrder) {
      return {
        ...o,
        id: 'b1e4f0a2-5d1c-4e8e-9f0a-1c2d3e4f5a6b',
        status: 'placed',
        createdAt: new Date().toISOString(),
      };
    }
  }
  const app = new App({ log: () => {} }).controllers(C).provide(Records.open(store));
  for (let i = 0; i < 1000; i++)
    await app.inject({
      method: 'POST',
      url: '/o',
      headers: { ...json, 'idempotency-key': `key-${i}-${'x'.repeat(20)}` },
      body: ORDER,
    });
  return store.bytesUsed / 1000;
}

/**
 * The outbound client against raw undici.request and global fetch, GETting 1 KiB of JSON from the
 * raw server in the child process (so the clients' process does nothing but call). Rounds of
 * fw, undici, fetch, fetch, undici, fw; the median round's ratios are reported, as for the servers.
 */
const CLIENT_CASE = 'client GET 1 KiB JSON';

async function clientCase(port: number): Promise<string[]> {
  const url = `http://127.0.0.1:${port}/kib`;
  const client = new Client();
  client.start();
  const agent = new Agent({ connections: 32 });
  const run = new Run();
  const fwGet = async () => (await client.get(run, url)).body;
  const undiciGet = async () => (await request(url, { dispatcher: agent })).body.text();
  const fetchGet = async () => (await fetch(url)).text();
  const measure = async (fn: () => Promise<unknown>) => {
    let done = 0;
    const until = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (Date.now() < until) {
          await fn();
          done++;
        }
      }),
    );
    return done / seconds;
  };
  for (const fn of [fwGet, undiciGet, fetchGet]) await measure(fn); // warm
  const runs: { fw: number; undici: number; fetch: number }[] = [];
  for (let i = 0; i < rounds; i++) {
    const f1 = await measure(fwGet);
    const u1 = await measure(undiciGet);
    const g1 = await measure(fetchGet);
    const g2 = await measure(fetchGet);
    const u2 = await measure(undiciGet);
    const f2 = await measure(fwGet);
    runs.push({ fw: (f1 + f2) / 2, undici: (u1 + u2) / 2, fetch: (g1 + g2) / 2 });
  }
  await client.close();
  await agent.close();
  const median = (by: (r: (typeof runs)[number]) => number) =>
    [...runs].sort((x, y) => by(x) - by(y))[Math.floor(runs.length / 2)];
  const u = median((r) => r.fw / r.undici);
  const g = median((r) => r.fw / r.fetch);
  const range = (by: (r: (typeof runs)[number]) => number) => {
    const xs = runs.map(by).sort((a, b) => a - b);
    return `${xs[0].toFixed(2)}–${xs[xs.length - 1].toFixed(2)}`;
  };
  const row = (
    r: (typeof runs)[number],
    base: number,
    label: string,
    spread: string,
    target: string,
    met: boolean,
  ) =>
    `| ${CLIENT_CASE} | ${Math.round(r.fw)} | | ${label} | ${Math.round(base)} | **${(r.fw / base).toFixed(2)}×** | ${spread} | ${target} ${met ? '✓' : '✗'} |`;
  return [
    row(
      u,
      u.undici,
      'undici.request',
      range((r) => r.fw / r.undici),
      '≥ 0.95×',
      u.fw / u.undici >= 0.95,
    ),
    row(
      g,
      g.fetch,
      'global fetch',
      range((r) => r.fw / r.fetch),
      '> 1×',
      g.fw > g.fetch,
    ),
  ];
}

/**
 * The redis-servers the chosen cases need. The plain RedisStore case runs on a server of its own
 * with no replica attached: a replica applying every write and the primary's replication stream
 * take CPU from these same two cores, a cost a deployment pays on other machines and a plain store
 * does not ask for (0.40× with the replica, 0.46× without, same code). The `replicas: 1` case and
 * its baseline share a primary with one replica, so WAIT's cost is isolated: both routes pay for
 * the replication stream, only one waits for it.
 */
async function startRedises(): Promise<Redises> {
  const started: BenchRedis[] = [];
  const urls: { standalone?: string; primary?: string } = {};
  const missing: Partial<Record<RedisKind, string>> = {};
  const start = async (kind: RedisKind): Promise<void> => {
    if (!CASES.some((c) => c.redis === kind && chosen(c.name))) return;
    const r = await startRedis({ replica: kind === 'primary' });
    if ('missing' in r) missing[kind] = r.missing;
    else {
      started.push(r);
      if (kind === 'primary' && !r.replicated) missing[kind] = 'the replica did not come up';
      else urls[kind] = r.url;
    }
  };
  await Promise.all([start('standalone'), start('primary')]);
  return {
    urls,
    missing,
    stop: async () => {
      for (const r of started) await r.stop();
    },
  };
}

async function main(): Promise<void> {
  const footprint: FootprintRow[] = [];
  // First, on a machine the bench has not loaded yet: the fresh processes.
  if (chosen('cold start')) footprint.push(...(await coldStart(spawns)));
  if (chosen('RSS')) footprint.push(...(await memory(3, seconds)));
  // Start-to-ready, two routes' memory, p99 at 50 connections, idle connections.
  const goals = await footprintGoals(chosen, { spawns, rounds, seconds });
  footprint.push(...goals.rows);

  const rows: string[] = [];
  const redis = await startRedises();
  try {
    rows.push(...(await httpCases(redis)));
    if (chosen(CLIENT_CASE)) {
      const raw = new ServerProcess('raw');
      try {
        rows.push(...(await clientCase(await raw.port)));
      } finally {
        await raw.stop();
      }
    }
  } finally {
    await redis.stop();
  }
  const uploads = chosen('upload') ? await uploadBench(rounds) : [];
  // Under Node 22 as well, when `npm run test:node22` has fetched it: Node 20's V8 runs full
  // collections during an upload at fw's heap size that Node 22's does not (docs/reference.md).
  if (chosen('upload') && existsSync(NODE22)) uploads.push(...(await uploadBench(rounds, NODE22)));
  const perRecord = await bytesPerRecord();
  console.log(
    '\n| case | fw req/s | fw p99 | baseline | baseline req/s | ratio | rounds | target |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  if (uploads.length > 0) {
    console.log('\n| upload case | fw | baseline | baseline | ratio | rounds | target |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of uploads) console.log(r);
  }
  if (footprint.length > 0) {
    console.log('\n| case | fw | baseline | baseline | ratio | target |');
    console.log('|---|---|---|---|---|---|');
    for (const f of footprint)
      console.log(
        `| ${f.name} | ${f.fw} | ${f.base} | ${f.baseValue} | **${f.ratio.toFixed(2)}×** | ${f.verdict} |`,
      );
  }
  if (goals.table.length > 0) console.log(['', ...goals.table].join('\n'));
  console.log(
    `\nMemory per kept record (MemoryStore, typical order answer): ${Math.round(perRecord)} bytes`,
  );
  console.log(
    `\n${rounds} rounds of ${seconds} s per case; cold start: median of ${spawns} fresh processes each; RSS: median of 3.`,
  );
}

void main();
