// The server the derived-keys kill test runs in a child process: POST /pay is idempotent on a
// RedisStore (it outlives the process) and charges the bank twice through a Target with
// `idempotencyKeys: true`. With HANG=1 it never answers after the second charge: the test kills it
// there with SIGKILL. Prints `listening <port>` once it takes requests.
import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { RedisStore, Space } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';

const env = process.env;
const Payments = Space('payments', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 300 });
const client = new Client();
const bank = Target('bank', { idempotencyKeys: true }).open(client, { base: env.BANK_URL! });

@Controller()
class Shop {
  @Post('/pay')
  @Idempotent(Payments)
  @Returns(Status(201, Object))
  async pay(c: Ctx) {
    const a = (await bank.postJson(c, '/charges', {}, { n: 1 })).status;
    const b = (await bank.postJson(c, '/charges', {}, { n: 2 })).status;
    if (env.HANG === '1') await new Promise(() => {}); // killed here, both charges sent
    return { a, b };
  }
}

async function main(): Promise<void> {
  const store = new RedisStore({ url: env.REDIS_URL!, commandTimeoutMs: 5000 });
  const app = new App({ log: () => undefined })
    .controllers(Shop)
    .provide(client)
    .provide(bank)
    .provide(Payments.open(store));
  const { port } = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening ${port}`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
