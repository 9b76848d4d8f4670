// The servers under test, in a child process so the load generator has the other core.
// Each case pairs an fw route with a raw node:http handler doing the same work by hand.
import 'reflect-metadata';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { BIG, KIB, SMALL, benchApp } from './app';

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

async function main(): Promise<void> {
  const app = benchApp();
  const fw = await app.listen({ port: 0 });
  const raw = createServer({ keepAliveTimeout: 5000 }, rawHandler);
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
  process.send!({ fw: fw.port, raw: (raw.address() as AddressInfo).port });
}

void main();
process.on('SIGINT', () => process.exit(0));
