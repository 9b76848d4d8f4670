// The server the derived-keys kill test runs in a child process: POST /pay is idempotent on a
// RedisStore (it outlives the process) and calls an fw upstream through Targets with
// `idempotencyKeys: true`, as MODE says:
// - plain: a charge, then a reserve per sku (one template, two turns);
// - step-then-call: a charge in c.step('charge'), then a reserve;
// - in-step: a charge in c.step('charge'), then a reserve in c.step('reserve');
// - branch: a fraud check when FLAG=1, then a charge.
// With HANG=1 it never answers after its last call (inside the reserve step in `in-step`): the
// test kills it there with SIGKILL. Prints `listening <port>` once it takes requests.
import { App, Controller, Ctx, Idempotent, Post, Returns, Status } from 'fw-http';
import { RedisStore, Space } from 'fw-http/cache';
import { Client, Target } from 'fw-http/fetch';

const env = process.env;
// A lease a loaded machine renews in time (renewed every third of it), short enough for a quick retry.
const Payments = Space('payments', { ttlSeconds: 60, maxBytes: 4096, leaseMs: 1000 });
const client = new Client();
const base = env.UPSTREAM_URL!;
const bank = Target('bank', { idempotencyKeys: true }).open(client, { base });
const warehouse = Target('warehouse', { idempotencyKeys: true }).open(client, { base });
const fraud = Target('fraud', { idempotencyKeys: true }).open(client, { base });
const hang = (): Promise<void> => (env.HANG === '1' ? new Promise(() => {}) : Promise.resolve()); // killed here

const charge = async (c: Ctx) => (await bank.postJson(c, '/charges', {}, { amount: 5 })).status;
const reserve = async (c: Ctx, sku: string) =>
  (await warehouse.postJson(c, '/reserve/{sku}', { sku }, { qty: 1 })).status;

const modes: Record<string, (c: Ctx) => Promise<number[]>> = {
  plain: async (c) => [await charge(c), await reserve(c, 'a'), await reserve(c, 'b')],
  'step-then-call': async (c) => [await c.step('charge', () => charge(c)), await reserve(c, 'a')],
  'in-step': async (c) => [
    await c.step('charge', () => charge(c)),
    await c.step('reserve', async () => {
      const status = await reserve(c, 'a');
      await hang(); // after the reserve, before the step's record
      return status;
    }),
  ],
  branch: async (c) => {
    const checked = env.FLAG === '1' ? [(await fraud.postJson(c, '/checks', {}, {})).status] : [];
    return [...checked, await charge(c)];
  },
};

@Controller()
class Shop {
  @Post('/pay')
  @Idempotent(Payments)
  @Returns(Status(201, Object))
  async pay(c: Ctx) {
    const statuses = await modes[env.MODE!]!(c);
    await hang();
    return { statuses };
  }
}

async function main(): Promise<void> {
  const store = new RedisStore({ url: env.REDIS_URL!, commandTimeoutMs: 5000 });
  const app = new App({ log: () => undefined })
    .controllers(Shop)
    .provide(client)
    .provide(Payments.open(store));
  const { port } = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening ${port}`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
