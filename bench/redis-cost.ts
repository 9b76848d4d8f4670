// `node dist/bench/redis-cost.js` after `npm run build`: what a first idempotent POST on Redis
// costs in CPU time, the app's process and redis-server's together, beside a validated POST, in
// one process and one run. CPU time per request is what a loaded machine does not blur as much
// as requests per second: a busy machine slows every side, but each request still costs what it
// costs. Requests go through `app.inject` (no sockets) in batches of 64 at once, so auto-pipelining
// has company. The look-up-first path (get, SET NX, keep: three commands) runs through a store
// without `putIfAbsentOrGet`, the one-round-trip path (claim-or-read, keep) through RedisStore.
// Two rows bound what the step on Redis can cost: the same first POST on a MemoryStore (the step
// without a network store), and ioredis alone sending the step's two commands (the claim-or-read
// and the compare-and-set keep, same scripts, same sizes) with no framework around them.
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import net from 'node:net';
import { App, Body, Controller, Idempotent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, RedisStore, Space, type Store } from 'fw-http/cache';
import IORedis from 'ioredis';
import { startRedis } from './redis';

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}
const options = { ttlSeconds: 3600, maxBytes: 64 * 1024, maxBytesPerCaller: 1 << 30 };
const Plain = Space('cost-plain', options);
const OneTrip = Space('cost-one', options);
const ThreeTrips = Space('cost-three', options);
const Replicated = Space('cost-replicas', options);
const InMemory = Space('cost-memory', options);

@Controller()
class Cost {
  @Post('/validated')
  @Returns(Status(201, NewOrder))
  validated(@Body() o: NewOrder) {
    return o;
  }
  @Post('/one')
  @Idempotent(OneTrip, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  one(@Body() o: NewOrder) {
    return o;
  }
  @Post('/three')
  @Idempotent(ThreeTrips, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  three(@Body() o: NewOrder) {
    return o;
  }
  @Post('/memory')
  @Idempotent(InMemory, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  memory(@Body() o: NewOrder) {
    return o;
  }
  @Post('/replicas')
  @Idempotent(Replicated, { by: () => 'bench' })
  @Returns(Status(201, NewOrder))
  replicas(@Body() o: NewOrder) {
    return o;
  }
}

/** The store's four operations and nothing else: the idempotency step looks the key up first. */
const lookUpFirst = (s: RedisStore): Store => ({
  get: (k) => s.get(k),
  putIfAbsent: (k, v, t) => s.putIfAbsent(k, v, t),
  put: (k, v, t, o) => s.put(k, v, t, o),
  del: (k, o) => s.del(k, o),
  close: async () => {},
});

/** redis-server's CPU seconds so far (user + sys), from INFO cpu. */
function redisCpu(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let reply = '';
    socket.once('error', reject);
    socket.once('connect', () => socket.write('INFO cpu\r\n'));
    socket.on('data', (c: Buffer) => {
      reply += c.toString();
      const user = /used_cpu_user:([\d.]+)/.exec(reply);
      const sys = /used_cpu_sys:([\d.]+)/.exec(reply);
      if (user && sys && reply.includes('used_cpu_user_children')) {
        socket.destroy();
        resolve(Number(user[1]) + Number(sys[1]));
      }
    });
  });
}

const ORDER = JSON.stringify({ sku: 'abc-123', qty: 3 });
let keys = 0;

/** µs of CPU per request (this process, redis-server) over `n` requests to `path`, 64 at a time. */
async function measure(app: App, path: string, n: number, port: number) {
  const send = () =>
    app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json', 'idempotency-key': `k${keys++}` },
      body: ORDER,
    });
  const app0 = process.cpuUsage();
  const redis0 = await redisCpu(port);
  for (let done = 0; done < n; done += 64) {
    const answers = await Promise.all(Array.from({ length: 64 }, send));
    if (answers.some((a) => a.status !== 201)) throw new Error(`${path}: not 201`);
  }
  const used = process.cpuUsage(app0);
  const redis = (await redisCpu(port)) - redis0;
  return { app: (used.user + used.system) / n, redis: (redis * 1e6) / n };
}

// The step's two scripts as RedisStore sends them (redis-store.ts): claim-or-read, then keep.
const CLAIM = `local held = redis.call('GET', KEYS[1]) if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return false`;
const KEEP = `if redis.call('GET', KEYS[1]) == ARGV[1] then
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
interface Scripted {
  claimBuffer(k: string, v: Buffer, ms: number): Promise<Buffer | null>;
  keep(k: string, expect: Buffer, v: Buffer, ms: number): Promise<number>;
}

/** µs of CPU per claim-and-keep pair sent by ioredis alone, 64 pairs at a time (the floor). */
async function measureIoredis(url: string, n: number, port: number) {
  const client = new IORedis(url, { enableAutoPipelining: true, keyPrefix: 'floor:' });
  client.defineCommand('claim', { numberOfKeys: 1, lua: CLAIM });
  client.defineCommand('keep', { numberOfKeys: 1, lua: KEEP });
  const scripted = client as unknown as Scripted;
  // Sizes of a claim record and of a kept 201 with this body, as the step writes them.
  const claim = Buffer.alloc(60, 1);
  const answer = Buffer.alloc(260, 2);
  const pair = async () => {
    const k = `k${keys++}`;
    if ((await scripted.claimBuffer(k, claim, 30_000)) !== null) throw new Error('taken');
    if ((await scripted.keep(k, claim, answer, 3_600_000)) !== 1) throw new Error('not kept');
  };
  await Promise.all(Array.from({ length: 64 }, pair)); // the scripts loaded
  const app0 = process.cpuUsage();
  const redis0 = await redisCpu(port);
  for (let done = 0; done < n; done += 64) await Promise.all(Array.from({ length: 64 }, pair));
  const used = process.cpuUsage(app0);
  const redis = (await redisCpu(port)) - redis0;
  client.disconnect();
  return { app: (used.user + used.system) / n, redis: (redis * 1e6) / n };
}

async function main(): Promise<void> {
  const redis = await startRedis();
  if ('missing' in redis) throw new Error(redis.missing);
  const port = Number(new URL(redis.url).port);
  const one = new RedisStore({ url: redis.url, keyPrefix: 'one:' });
  const three = new RedisStore({ url: redis.url, keyPrefix: 'three:' });
  const waiting = new RedisStore({ url: redis.url, keyPrefix: 'rep:', replicas: 1 });
  const app = new App({ log: () => {} })
    .controllers(Cost)
    .provide(Plain.open(one))
    .provide(OneTrip.open(one))
    .provide(ThreeTrips.open(lookUpFirst(three)))
    .provide(Replicated.open(waiting))
    .provide(InMemory.open(new MemoryStore({ bytes: 1 << 30 })));
  const n = Number(process.env.COST_REQUESTS ?? 20_000);
  const paths = [
    '/validated',
    '/memory',
    '/three',
    '/one',
    ...(redis.replicated ? ['/replicas'] : []),
    'ioredis alone',
  ];
  const measurePath = (p: string, count: number) =>
    p === 'ioredis alone' ? measureIoredis(redis.url, count, port) : measure(app, p, count, port);
  for (const p of paths) await measurePath(p, 2000); // warm up
  const rows: Record<string, { app: number; redis: number }[]> = {};
  // Three rounds, the paths in turn, so a drift of the machine falls on every path.
  for (let round = 0; round < 3; round++)
    for (const p of paths) (rows[p] ??= []).push(await measurePath(p, n));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
  const base = median(rows['/validated']!.map((r) => r.app + r.redis));
  console.log('| path | app µs/req | redis-server µs/req | total | validated ÷ total |');
  console.log('|---|---|---|---|---|');
  for (const p of paths) {
    const app = median(rows[p]!.map((r) => r.app));
    const red = median(rows[p]!.map((r) => r.redis));
    const total = median(rows[p]!.map((r) => r.app + r.redis));
    console.log(
      `| ${p} | ${app.toFixed(1)} | ${red.toFixed(1)} | ${total.toFixed(1)} | ${(base / total).toFixed(2)}× |`,
    );
  }
  await Promise.all([one.close(), three.close(), waiting.close()]);
  await redis.stop();
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
