// OTEL-13 the idempotency outcomes not counted elsewhere: released (the handler failed and the key
// was given back), not_kept (an answer larger than the space keeps), store_unavailable and the
// first answers stored on an async handler; and what `@Idempotent({ by })` may name, in the log.
// Read with the real SDK's MeterProvider. The mutation run found these uncounted.
import type { DataPoint } from '@opentelemetry/sdk-metrics';
import { App, Controller, fail, Idempotent, Post, Returns, Status } from 'fw-http';
import { MemoryStore, Space, type Store } from 'fw-http/cache';
import { globalMetricReader } from '../support/metric-reader';

const reader = globalMetricReader();

async function counted(route: string, outcome: string): Promise<number> {
  const { resourceMetrics } = await reader.collect();
  let n = 0;
  for (const scope of resourceMetrics.scopeMetrics)
    for (const m of scope.metrics)
      if (m.descriptor.name === 'fw.idempotency.outcomes')
        for (const p of m.dataPoints as DataPoint<number>[])
          if (
            p.attributes['http.route'] === route &&
            p.attributes['fw.idempotency.outcome'] === outcome
          )
            n += p.value;
  return n;
}

const Small = Space('outcomes-small', { ttlSeconds: 60, maxBytes: 300 });
const Down = Space('outcomes-down', { ttlSeconds: 60, maxBytes: 4096 });
const inner = new MemoryStore({ bytes: 1 << 20 });
const failing: Store = {
  get: () => Promise.reject(new Error('down')),
  putIfAbsent: (k, v, t) => inner.putIfAbsent(k, v, t),
  put: (k, v, t, o) => inner.put(k, v, t, o),
  del: (k, o) => inner.del(k, o),
  close: () => inner.close(),
};

let who: unknown = 'ann';
@Controller()
class Outcomes {
  @Post('/released') @Idempotent(Small) @Returns(Status(201, Object)) released(): object {
    throw fail.conflict('out of stock');
  }
  @Post('/huge') @Idempotent(Small) @Returns(Status(201, Object)) huge() {
    return { pad: 'x'.repeat(400) };
  }
  @Post('/async') @Idempotent(Small) @Returns(Status(201, Object)) async later() {
    await new Promise((r) => setTimeout(r, 1));
    return { ok: true };
  }
  @Post('/down') @Idempotent(Down) @Returns(Status(201, Object)) down() {
    return { ok: true };
  }
  @Post('/by') @Idempotent(Small, { by: () => who as string }) @Returns(Status(201, Object)) by() {
    return { ok: true };
  }
}

const lines: string[] = [];
const app = new App({ log: (l) => void lines.push((JSON.parse(l) as { msg: string }).msg) })
  .controllers(Outcomes)
  .provide(Small.open(new MemoryStore({ bytes: 1 << 20 })))
  .provide(Down.open(failing));
let n = 0;
const post = (url: string) =>
  app.inject({ method: 'POST', url, headers: { 'idempotency-key': `o-${++n}` } });
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('OTEL-13 idempotency outcomes', () => {
  it('OTEL-13 a handler that failed, its key given back, is counted released (it was counted nothing)', async () => {
    expect((await post('/released')).status).toBe(409);
    expect(await counted('/released', 'released')).toBe(1);
    expect(await counted('/released', 'stored')).toBe(0);
  });

  it('OTEL-13 IDEM-16 an answer larger than the space keeps is counted not_kept, and sent', async () => {
    const res = await post('/huge');
    expect(res.status).toBe(201);
    expect(await counted('/huge', 'not_kept')).toBe(1);
    expect(await counted('/huge', 'stored')).toBe(0);
  });

  it('OTEL-13 an async handler answer kept is counted stored, once', async () => {
    expect((await post('/async')).status).toBe(201);
    expect(await counted('/async', 'stored')).toBe(1);
    expect(await counted('/async', 'released')).toBe(0);
  });

  it('OTEL-13 IDEM-21 a store that cannot be read is counted store_unavailable', async () => {
    expect((await post('/down')).status).toBe(503);
    expect(await counted('/down', 'store_unavailable')).toBe(1);
  });
});

describe('IDEM-11 what by may name', () => {
  it('IDEM-11 null or undefined is no caller: 403, the handler not run', async () => {
    for (const none of [null, undefined]) {
      who = none;
      const res = await post('/by');
      expect([res.status, (res.json() as { error: string }).error]).toEqual([
        403,
        'no caller for this idempotent request',
      ]);
    }
  });

  it('IDEM-11 an empty string, a function or a number is the program’s mistake: 500, said in the log', async () => {
    const said: string[] = [];
    for (const wrong of ['', () => 'ann', 42]) {
      who = wrong;
      lines.length = 0;
      expect((await post('/by')).status).toBe(500);
      await settle();
      said.push(lines.find((l) => l.includes('@Idempotent by returned'))!);
    }
    expect(said.map((l) => /returned (.+?): it must/.exec(l)?.[1])).toEqual([
      'an empty string',
      'a function',
      'number',
    ]);
    who = 'ann';
    expect((await post('/by')).status).toBe(201);
  });
});
