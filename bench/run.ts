// `npm run bench`: each fw route against a raw node:http server doing the same work, alternating,
// in one run, on loopback. Prints req/s, p99 and the ratio to raw. Bounded: BENCH_SECONDS (3) per
// run, BENCH_ROUNDS (3) alternations per case; the best run of each side counts.
import { fork } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';

interface Case {
  readonly name: string;
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly target: number;
}

const CASES: Case[] = [
  { name: 'GET small JSON', path: '/small', target: 0.9 },
  { name: 'POST /orders validated body', path: '/orders', method: 'POST', body: JSON.stringify({ sku: 'abc-123', qty: 3 }), target: 0.85 },
];

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

async function load(port: number, c: Case): Promise<{ rps: number; p99: number; errors: number }> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${c.path}`,
    method: c.method ?? 'GET',
    body: c.body,
    headers: c.body ? { 'content-type': 'application/json' } : {},
    connections: 64,
    pipelining: 1,
    duration: seconds,
  });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function main(): Promise<void> {
  const child = fork(join(__dirname, 'servers.js'), { stdio: 'inherit' });
  const ports = await new Promise<{ fw: number; raw: number }>((resolve) => child.once('message', (m) => resolve(m as { fw: number; raw: number })));
  const rows: string[] = [];
  try {
    for (const c of CASES) {
      await load(ports.fw, { ...c }); // warm both sides once
      await load(ports.raw, { ...c });
      let fw = { rps: 0, p99: 0, errors: 0 };
      let raw = { rps: 0, p99: 0, errors: 0 };
      for (let i = 0; i < rounds; i++) {
        const f = await load(ports.fw, c);
        const r = await load(ports.raw, c);
        if (f.rps > fw.rps) fw = f;
        if (r.rps > raw.rps) raw = r;
      }
      const ratio = fw.rps / raw.rps;
      rows.push(`| ${c.name} | ${Math.round(fw.rps)} | ${fw.p99} ms | ${Math.round(raw.rps)} | ${raw.p99} ms | **${ratio.toFixed(2)}×** | ≥ ${c.target}× ${ratio >= c.target ? '✓' : '✗'} |${fw.errors + raw.errors ? ` errors: ${fw.errors}/${raw.errors}` : ''}`);
      console.error(rows[rows.length - 1]);
    }
  } finally {
    child.kill();
  }
  console.log('\n| case | fw req/s | fw p99 | raw req/s | raw p99 | fw / raw | target |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

void main();
