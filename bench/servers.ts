// One server under test per process (`node servers.js fw|raw|fastify [--standalone <redis-url>]
// [--primary <redis-url>]`, the URLs for fw's Redis routes: bench/app.ts), so the load
// generator has the other core and each server's memory can be read apart. Each case pairs an fw
// route with a raw node:http handler doing the same work by hand (or Fastify's way). The process
// sends its port once listening and answers 'rss' with its resident set size. Only the chosen
// server's code is loaded: raw node:http loads nothing but node:http and zlib, Fastify nothing of fw.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { benchApp as BenchApp, BenchRedisUrls } from './app';
import { BIG, KIB, SMALL } from './data';
import type { fastifyApp as FastifyApp } from './fastify';
import type { listenNest as ListenNest } from './nest-app';
import type { twoRoutesApp as TwoRoutesApp } from './two-routes-app';
import type { twoRoutesZodApp as TwoRoutesZodApp } from './two-routes-zod-app';

// The answer a replay sends, as the raw server writes it by hand.
const REPLAY = JSON.stringify({ sku: 'abc-123', qty: 3 });

function rawHandler(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET' && req.url === '/kib') {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': KIB.length });
    res.end(KIB);
    return;
  }
  if (req.method === 'GET' && req.url === '/versioned') {
    if (req.headers['if-none-match'] === 'W/"7"') {
      res.writeHead(304, { etag: 'W/"7"' });
      res.end();
      return;
    }
    const body = JSON.stringify(SMALL);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      etag: 'W/"7"',
    });
    res.end(body);
    return;
  }
  if (req.method === 'GET' && req.url === '/big') {
    const body = gzipSync(JSON.stringify(BIG), { level: 6 });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': body.length,
      'content-encoding': 'gzip',
      vary: 'Accept-Encoding',
    });
    res.end(body);
    return;
  }
  if (req.method === 'POST' && req.url === '/idem') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(201, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(REPLAY),
        'idempotent-replayed': 'true',
      });
      res.end(REPLAY);
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/small') {
    const body = JSON.stringify(SMALL);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  if (req.method === 'POST' && req.url === '/orders') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let v: { sku?: unknown; qty?: unknown };
      try {
        v = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail(res, 'body: invalid JSON');
      }
      if (typeof v !== 'object' || v === null) return fail(res, 'body: must be a JSON object');
      if (typeof v.sku !== 'string' || v.sku.length < 1 || v.sku.length > 32)
        return fail(res, 'body.sku: bad');
      if (typeof v.qty !== 'number' || !Number.isInteger(v.qty) || v.qty < 1 || v.qty > 100)
        return fail(res, 'body.qty: bad');
      const body = JSON.stringify({ sku: v.sku, qty: v.qty });
      res.writeHead(201, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
    return;
  }
  res.writeHead(404).end();
}

function fail(res: ServerResponse, message: string): void {
  const body = JSON.stringify({ error: message, status: 400 });
  res.writeHead(400, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** What the parent learns of a server process. */
export type ServerMessage =
  { readonly port: number } | { readonly rss: number } | { readonly cpuMs: number };
/**
 * `fw-two`: fw with Fastify's two routes only, the body a class-validator class; `fw-zod`: the
 * same routes declared by zod schemas (no class-validator loaded); `fastify-cv`: Fastify with
 * class-validator loaded as well (its load time is the class-validator app's allowance); `nest`:
 * NestJS on Fastify, the body checked by class-validator's ValidationPipe. For the footprint goals.
 */
export type ServerKind = 'fw' | 'raw' | 'fastify' | 'fw-two' | 'fw-zod' | 'fastify-cv' | 'nest';

// Issue 28's 10,000 idle connections open over several seconds: set, every server keeps them this
// long; unset, each keeps its own default (Fastify's 72 s, 5 s for the others).
const keepAliveMs =
  process.env.BENCH_KEEP_ALIVE_MS === undefined
    ? undefined
    : Number(process.env.BENCH_KEEP_ALIVE_MS);

async function listen(kind: ServerKind, redis: BenchRedisUrls): Promise<number> {
  switch (kind) {
    case 'fw': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the fw process loads fw
      const { benchApp } = require('./app') as { benchApp: typeof BenchApp };
      return (await benchApp(redis).listen({ port: 0 })).port;
    }
    case 'fw-two': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only this process loads fw
      const { twoRoutesApp } = require('./two-routes-app') as {
        twoRoutesApp: typeof TwoRoutesApp;
      };
      return (await twoRoutesApp(keepAliveMs).listen({ port: 0 })).port;
    }
    case 'fw-zod': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only this process loads fw
      const { twoRoutesZodApp } = require('./two-routes-zod-app') as {
        twoRoutesZodApp: typeof TwoRoutesZodApp;
      };
      return (await twoRoutesZodApp(keepAliveMs).listen({ port: 0 })).port;
    }
    case 'nest': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only this process loads Nest
      const { listenNest } = require('./nest-app') as { listenNest: typeof ListenNest };
      return listenNest(keepAliveMs);
    }
    case 'fastify-cv':
    case 'fastify': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded as a class-validator app loads it
      if (kind === 'fastify-cv') require('class-validator');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the Fastify process loads Fastify
      const { fastifyApp } = require('./fastify') as { fastifyApp: typeof FastifyApp };
      const app = fastifyApp(keepAliveMs);
      await app.listen({ port: 0, host: '127.0.0.1' });
      return (app.server.address() as AddressInfo).port;
    }
    case 'raw': {
      const raw = createServer({ keepAliveTimeout: keepAliveMs ?? 5000 }, rawHandler);
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
      return (raw.address() as AddressInfo).port;
    }
  }
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { standalone: { type: 'string' }, primary: { type: 'string' } },
  });
  const port = await listen(positionals[0] as ServerKind, values);
  process.on('message', (m) => {
    if (m === 'rss') process.send!({ rss: process.memoryUsage().rss } satisfies ServerMessage);
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ cpuMs: (user + system) / 1000 } satisfies ServerMessage);
    }
  });
  process.send!({ port } satisfies ServerMessage);
}

void main();
process.on('SIGINT', () => process.exit(0));
