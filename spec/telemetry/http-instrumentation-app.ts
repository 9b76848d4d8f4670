import { App, Controller, Ctx, Get, Idempotent, Param, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { Client, OpenTarget, Target } from 'fw-http/fetch';

// The app and the requests of http-instrumentation.spec.ts (see http-instrumentation-child.ts).
// Each scenario answers how many spans its requests end at least.

const Kept = Space('http-instrumentation', { ttlSeconds: 60, maxBytes: 4096 });

@Controller()
class Orders {
  @Get('/orders/{id}') @Returns(Object) one(@Param('id') id: number) {
    return { id };
  }
  @Post('/orders') @Idempotent(Kept) @Returns(Status(201, Object)) create() {
    return { id: 1 };
  }
  @Get('/boom') boom() {
    throw new Error('the ledger is gone');
  }
}

@Controller()
class Who {
  @Get('/who') @Returns(String) who() {
    return 'upstream';
  }
}

@Controller()
class Calls {
  constructor(readonly up: OpenTarget) {}
  @Get('/call') @Returns(String) async call(c: Ctx) {
    return (await this.up.get(c, '/who')).body.toString();
  }
}

/** Serves `app` on a free port for one scenario, then closes it. */
async function serving<T>(app: App, fn: (url: string) => Promise<T>): Promise<T> {
  const { url } = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    return await fn(url);
  } finally {
    await app.close();
  }
}

const quiet = { log: () => {} };
const orders = () =>
  new App(quiet).controllers(Orders).provide(Kept.open(new MemoryStore({ bytes: 1 << 20 })));

export const scenarios: Record<string, () => Promise<number>> = {
  get: () =>
    serving(orders(), async (url) => {
      await (await fetch(`${url}/orders/7`)).text();
      return 1;
    }),
  idempotent: () =>
    serving(orders(), async (url) => {
      const headers = { 'idempotency-key': 'k-1' };
      await (await fetch(`${url}/orders`, { method: 'POST', headers })).text();
      return 1;
    }),
  failure: () =>
    serving(orders(), async (url) => {
      await (await fetch(`${url}/boom`)).text();
      return 1;
    }),
  outbound: async () => {
    const upstream = new App(quiet).controllers(Who);
    const up = await upstream.listen({ port: 0, host: '127.0.0.1' });
    try {
      const caller = new App(quiet)
        .controllers(Calls)
        .provide(Target('up').open(new Client(), { base: up.url }));
      return await serving(caller, async (url) => {
        await (await fetch(`${url}/call`)).text();
        return 3;
      });
    } finally {
      await upstream.close();
    }
  },
  inject: async () => {
    const app = orders();
    await app.inject({ url: '/orders/3' });
    await app.close();
    return 1;
  },
};
