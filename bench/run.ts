// `npm run bench`: each fw case against a baseline doing the same work, alternating, in one run,
// on loopback. Bounded: BENCH_SECONDS (2) per run, BENCH_ROUNDS (7) rounds of fw-base-base-fw per
// case; the median round (by ratio) is reported. Servers run in a child process so the load generator
// (autocannon, or the outbound clients) has the other core.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { IsInt, IsString } from 'class-validator';
import { Agent, request } from 'undici';
import { App, Body, Controller, Idempotent, Post, Returns, Run, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client } from 'fw-http/fetch';
import { DISTINCT_FORM, ONE_KEY_FORM } from './app';

interface Load {
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /** A fresh Idempotency-Key per request. */
  readonly freshKey?: boolean;
  /** Connections at once (default 64). A heavy request keeps it low: requests still queued when a run ends are served during the next one. */
  readonly connections?: number;
}
interface Case {
  readonly name: string;
  readonly fw: Load;
  /** The baseline: the raw server doing the same by hand, or another fw route. */
  readonly base: Load & { readonly on: 'raw' | 'fw'; readonly label: string };
  readonly target: number;
}

const ORDER = JSON.stringify({ sku: 'abc-123', qty: 3 });
const json = { 'content-type': 'application/json' };
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const CASES: Case[] = [
  {
    name: 'GET small JSON',
    fw: { path: '/small' },
    base: { on: 'raw', label: 'raw node:http', path: '/small' },
    target: 0.9,
  },
  {
    name: 'POST validated body',
    fw: { path: '/orders', method: 'POST', body: ORDER, headers: json },
    base: {
      on: 'raw',
      label: 'raw node:http',
      path: '/orders',
      method: 'POST',
      body: ORDER,
      headers: json,
    },
    target: 0.85,
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
    base: {
      on: 'raw',
      label: 'raw node:http, same bytes',
      path: '/idem',
      method: 'POST',
      body: ORDER,
      headers: { ...json, 'idempotency-key': 'replayed-key' },
    },
    target: 0.85,
  },
  {
    name: 'POST first (claim + handler + keep)',
    fw: { path: '/idem', method: 'POST', body: ORDER, headers: json, freshKey: true },
    base: {
      on: 'fw',
      label: 'fw validated POST',
      path: '/orders',
      method: 'POST',
      body: ORDER,
      headers: json,
    },
    target: 0,
  },
  {
    name: 'GET Versioned → 304',
    fw: { path: '/versioned', headers: { 'if-none-match': 'W/"7"' } },
    base: {
      on: 'raw',
      label: 'raw node:http',
      path: '/versioned',
      headers: { 'if-none-match': 'W/"7"' },
    },
    target: 0.9,
  },
  {
    // Reading is linear: a name repeated on every piece costs about what distinct names cost.
    name: 'POST 1 MiB form, one key repeated',
    fw: { path: '/form', method: 'POST', body: ONE_KEY_FORM, headers: form, connections: 2 },
    base: {
      on: 'fw',
      label: 'fw 1 MiB form, distinct keys',
      path: '/form',
      method: 'POST',
      body: DISTINCT_FORM,
      headers: form,
      connections: 2,
    },
    target: 0.5,
  },
  {
    name: 'GET 16 KiB JSON gzipped',
    fw: { path: '/big', headers: { 'accept-encoding': 'gzip' } },
    base: {
      on: 'raw',
      label: 'raw node:http + gzipSync',
      path: '/big',
      headers: { 'accept-encoding': 'gzip' },
    },
    target: 0.9,
  },
];

const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
let keys = 0;

async function load(port: number, l: Load): Promise<{ rps: number; p99: number; errors: number }> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${l.path}`,
    method: l.method ?? 'GET',
    body: l.body,
    headers: l.headers ?? {},
    connections: l.connections ?? 64,
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
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

type Measured = Awaited<ReturnType<typeof load>>;
const mean = (x: Measured, y: Measured): Measured => ({
  rps: (x.rps + y.rps) / 2,
  p99: Math.max(x.p99, y.p99),
  errors: x.errors + y.errors,
});

interface Ports {
  readonly fw: number;
  readonly raw: number;
}

async function httpCases(ports: Ports): Promise<string[]> {
  const rows: string[] = [];
  for (const c of CASES.filter(
    (k) => !process.env.BENCH_ONLY || k.name.includes(process.env.BENCH_ONLY),
  )) {
    const basePort = c.base.on === 'raw' ? ports.raw : ports.fw;
    await load(ports.fw, c.fw);
    await load(basePort, c.base);
    // Each round runs fw, its baseline, the baseline again and fw again (a drift in the machine's
    // speed during the round falls on both sides alike) and pairs the means; the median of the
    // rounds' ratios is steadier on a shared 2-core box than the best or the mean of either side.
    const runs: { f: Measured; b: Measured }[] = [];
    for (let i = 0; i < rounds; i++) {
      const f1 = await load(ports.fw, c.fw);
      const b1 = await load(basePort, c.base);
      const b2 = await load(basePort, c.base);
      const f2 = await load(ports.fw, c.fw);
      runs.push({ f: mean(f1, f2), b: mean(b1, b2) });
    }
    runs.sort((x, y) => x.f.rps / x.b.rps - y.f.rps / y.b.rps);
    const { f: fw, b: base } = runs[Math.floor(runs.length / 2)];
    const ratio = fw.rps / base.rps;
    const verdict = c.target ? `≥ ${c.target}× ${ratio >= c.target ? '✓' : '✗'}` : 'reported';
    const bad = c.fw.path === '/versioned' ? 0 : fw.errors + base.errors; // 304s count as non-2xx
    rows.push(
      `| ${c.name} | ${Math.round(fw.rps)} | ${fw.p99} ms | ${c.base.label} | ${Math.round(base.rps)} | **${ratio.toFixed(2)}×** | ${verdict} |${bad ? ` errors ${fw.errors}/${base.errors}` : ''}`,
    );
    console.error(rows[rows.length - 1]);
  }
  return rows;
}

class NewOrder {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

/** Bytes one kept record costs in the memory store: 1000 first POSTs through the real pipeline. */
async function bytesPerRecord(): Promise<number> {
  const Records = Space('records', { ttlSeconds: 3600, maxBytes: 64 * 1024 });
  const store = new MemoryStore({ bytes: 256 << 20 });
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
  const row = (
    r: (typeof runs)[number],
    base: number,
    label: string,
    target: string,
    met: boolean,
  ) =>
    `| ${CLIENT_CASE} | ${Math.round(r.fw)} | | ${label} | ${Math.round(base)} | **${(r.fw / base).toFixed(2)}×** | ${target} ${met ? '✓' : '✗'} |`;
  return [
    row(u, u.undici, 'undici.request', '≥ 0.95×', u.fw / u.undici >= 0.95),
    row(g, g.fetch, 'global fetch', '> 1×', g.fw > g.fetch),
  ];
}

async function main(): Promise<void> {
  const child = fork(join(__dirname, 'servers.js'), { stdio: 'inherit' });
  const rows: string[] = [];
  try {
    const ports = await new Promise<Ports>((resolve) =>
      child.once('message', (m) => resolve(m as Ports)),
    );
    rows.push(...(await httpCases(ports)));
    if (!process.env.BENCH_ONLY || CLIENT_CASE.includes(process.env.BENCH_ONLY))
      rows.push(...(await clientCase(ports.raw)));
  } finally {
    child.kill();
  }
  const perRecord = await bytesPerRecord();
  console.log('\n| case | fw req/s | fw p99 | baseline | baseline req/s | ratio | target |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(
    `\nMemory per kept record (MemoryStore, typical order answer): ${Math.round(perRecord)} bytes`,
  );
}

void main();
