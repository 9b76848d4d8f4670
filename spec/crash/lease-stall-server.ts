// The server the lease-stall test runs in a child process: POST /effect is idempotent on a
// RedisStore with a lease of LEASE_MS. Its handler prints `holding` once it runs (the test then
// stops the process with SIGSTOP) and waits for the process's own SIGCONT; then, as MODE says:
// - signal: reads `c.signal.aborted` and makes its effect (prints `effect`) only when it is false;
// - fetch: calls the upstream at UPSTREAM_URL through a Target, without looking at its signal.
// It prints `seen <json>` with what it found. Prints `listening <port>` once it takes requests.
import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { RedisStore, Space } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';

const env = process.env;
const Effects = Space('effects', { ttlSeconds: 60, maxBytes: 4096, leaseMs: Number(env.LEASE_MS) });
const client = new Client();
const bank = Target('bank').open(client, { base: env.UPSTREAM_URL ?? 'http://127.0.0.1:9' });

const resumed = (): Promise<void> => new Promise((r) => process.once('SIGCONT', () => r()));

@Controller()
class Shop {
  @Post('/effect')
  @Idempotent(Effects)
  @Returns(Status(201, Object))
  async effect(c: Ctx) {
    const back = resumed();
    console.log('holding');
    await back;
    if (env.MODE === 'fetch') {
      const status = await bank.postJson(c, '/charges', {}, { amount: 5 }).then(
        (res) => res.status,
        (e: unknown) => (e as { code?: string }).code,
      );
      console.log(`seen ${JSON.stringify({ status })}`);
      return { status };
    }
    const aborted = c.signal.aborted;
    console.log(
      `seen ${JSON.stringify({ aborted, reason: (c.signal.reason as { code?: string })?.code })}`,
    );
    if (aborted) throw c.signal.reason;
    console.log('effect');
    return { made: true };
  }
}

async function main(): Promise<void> {
  const store = new RedisStore({ url: env.REDIS_URL!, commandTimeoutMs: 5000 });
  const app = new App({ log: (line) => console.log(`log ${line}`) })
    .controllers(Shop)
    .provide(client)
    .provide(Effects.open(store));
  const { port } = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening ${port}`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
