import { App, Controller, Idempotent, Post, Returns, Status, type Ctx } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';
import { send } from '../support/post';

// Issue 22's idempotency items that a client sees at one route: who the caller is, what the key is.

const Orders = Space('orders', { ttlSeconds: 60, maxBytes: 4096 });

/** An app whose POST /by/<n> names its caller with `bys[n]`, and POST /one with no `by`; `runs` counts handler runs. */
function byApp(bys: readonly ((c: Ctx) => unknown)[], lines: string[]) {
  const runs = { n: 0 };
  const routes = bys.map((by, i) => {
    @Controller()
    class By {
      @Post(`/by/${i}`)
      @Idempotent(Orders, { by: by as (c: Ctx) => string })
      @Returns(Status(201, Object))
      create() {
        runs.n++;
        return { n: runs.n };
      }
    }
    Object.defineProperty(By, 'name', { value: `By${i}` });
    return By;
  });
  @Controller()
  class One {
    @Post('/one')
    @Idempotent(Orders)
    @Returns(Status(201, Object))
    create() {
      runs.n++;
      return { n: runs.n };
    }
  }
  const app = new App({ log: (l) => lines.push(JSON.parse(l).msg) })
    .controllers(...routes, One)
    .provide(Orders.open(new MemoryStore({ bytes: 1024 * 1024 })));
  return { app, runs };
}

describe('I22 idempotency: the caller and the key', () => {
  it('I22.2 a `by` that returns anything but a non-empty string is 500 naming the route in the log, and the handler never runs', async () => {
    const lines: string[] = [];
    const bad = [
      () => () => 'x',
      () => ({ id: 'x' }),
      () => '',
      () => 42,
      () => Object.prototype.toString,
    ];
    const { app, runs } = byApp(bad, lines);
    for (let i = 0; i < bad.length; i++) {
      const res = await app.inject({
        method: 'POST',
        url: `/by/${i}`,
        headers: { 'idempotency-key': `k${i}` },
      });
      expect([i, res.status]).toEqual([i, 500]);
      await new Promise((r) => setImmediate(r)); // the log sink writes on the next turn
      expect(JSON.stringify(res.json())).not.toContain('Idempotent'); // the reason is logged, not sent
      expect(
        lines.some(
          (l) =>
            l.includes(`POST /by/${i} (By${i}.create)`) && l.includes('@Idempotent by returned'),
        ),
      ).toBe(true);
    }
    expect(runs.n).toBe(0);
  });

  it('I22.2 a `by` that returns null is still 403, and a non-empty string a caller', async () => {
    const { app, runs } = byApp([() => null, () => 'alice'], []);
    const none = await app.inject({
      method: 'POST',
      url: '/by/0',
      headers: { 'idempotency-key': 'a' },
    });
    expect(none.status).toBe(403);
    const ok = await app.inject({
      method: 'POST',
      url: '/by/1',
      headers: { 'idempotency-key': 'a' },
    });
    expect(ok.status).toBe(201);
    expect(runs.n).toBe(1);
  });

  it('I22.14 two Idempotency-Key headers are 400 over a real socket, never the key "k1, k2"; one key holding a comma is still one key', async () => {
    const { app, runs } = byApp([], []);
    const { port } = await app.listen({ port: 0 });
    try {
      const head = (keys: string[]) =>
        `POST /one HTTP/1.1\r\nHost: x\r\n${keys.map((k) => `Idempotency-Key: ${k}\r\n`).join('')}Content-Length: 0\r\nConnection: close\r\n\r\n`;
      const two = await rawText(port, head(['k1', 'k2']));
      expect(two).toMatch(/^HTTP\/1.1 400 /);
      expect(two).toContain('more than one Idempotency-Key');
      expect(runs.n).toBe(0);
      // The same two as one line with a comma: one key, run once.
      expect(await rawText(port, head(['k1, k2']))).toMatch(/^HTTP\/1.1 201 /);
      expect(runs.n).toBe(1);
      expect(
        (await send(port, '/one', { headers: { 'idempotency-key': 'k1, k2' } })).headers[
          'idempotent-replayed'
        ],
      ).toBe('true');
    } finally {
      await app.close();
    }
  });
});

async function rawText(port: number, text: string): Promise<string> {
  const { raw } = await import('../support/raw');
  return (await raw(port, text, { quietMs: 2000 })).text;
}
