import { App, Controller, Ctx, Get, fail, logger, Returns } from 'fw-http';

const WAIT_MS = 200;

@Controller()
class IdController {
  @Returns(Object)
  @Get('/id')
  id(c: Ctx) {
    return { id: c.requestId(), again: c.requestId() };
  }
  @Returns(String)
  @Get('/wait')
  async wait() {
    await new Promise((r) => setTimeout(r, WAIT_MS));
    return 'waited';
  }
  @Get('/fails') fails() {
    throw fail.conflict('no');
  }
}

const make = (mw?: Parameters<App['use']>[0]) => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(IdController);
  if (mw) app.use(mw);
  const logged = async () => {
    await new Promise((r) => setImmediate(r));
    return lines;
  };
  return { app, logged };
};

describe('request ids', () => {
  it('RID-01 every request has an id, with or without the logger', async () => {
    const { app } = make();
    const body = (await app.inject({ url: '/id' })).json<{ id: string; again: string }>();
    expect(body.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(body.again).toBe(body.id);
  });

  it('RID-02 ids are off by default: no X-Request-Id without the logger', async () => {
    const { app } = make();
    expect((await app.inject({ url: '/id' })).headers['x-request-id']).toBeUndefined();
    const plain = make(logger);
    expect((await plain.app.inject({ url: '/id' })).headers['x-request-id']).toBeUndefined();
  });

  it("RID-03 LOG-01 the logger writes one line in pino's shape by default, its msg the text line", async () => {
    const { app, logged } = make(logger);
    await app.inject({ url: '/id' });
    const line = JSON.parse((await logged())[0]);
    expect(line).toMatchObject({ level: 30, req: { method: 'GET', url: '/id' } });
    expect(line.msg).toMatch(/^GET \/id 200 \d+µs$/);
  });

  it('RID-03 with format text the logger writes plain text', async () => {
    const { app, logged } = make(logger.with({ format: 'text' }));
    await app.inject({ url: '/id' });
    expect((await logged())[0]).toMatch(/^GET \/id 200 \d+µs$/);
  });

  it('RID-04 RID-06 the JSON line has method, path, status, us and a reqId equal to the X-Request-Id', async () => {
    const { app, logged } = make(logger.with({ format: 'json', requestId: true }));
    const res = await app.inject({ url: '/id?x=1' });
    const line = JSON.parse((await logged())[0]);
    expect(Object.keys(line)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'req',
      'res',
      'responseTime',
      'us',
      'msg',
    ]);
    expect(line).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/id' },
      res: { statusCode: 200 },
    });
    expect(Math.abs(line.time - Date.now())).toBeLessThan(60_000);
    expect(typeof line.us).toBe('number');
    expect(line.responseTime).toBe(line.us / 1000);
    expect(line.reqId).toBe(res.headers['x-request-id']);
    expect(res.json<{ id: string }>().id).toBe(line.reqId);
  });

  it('RID-04 the duration is in microseconds: a request that waits 200 ms logs about 200,000 us', async () => {
    const { app, logged } = make(logger.with({ format: 'json', requestId: true }));
    await app.inject({ url: '/wait' });
    await logged(); // the line is written after the answer, a turn later
    const { us } = JSON.parse((await logged())[0]) as { us: number };
    expect(Number.isInteger(us)).toBe(true);
    // Node's timers run on the loop's millisecond clock and may fire up to a millisecond early.
    expect(us).toBeGreaterThanOrEqual((WAIT_MS - 5) * 1000); // milliseconds would log about 200
    expect(us).toBeLessThan(60 * 1_000_000); // nanoseconds would log about 200,000,000
  });

  it('RID-03 the text line gives the duration in microseconds too', async () => {
    const { app, logged } = make(logger.with({ format: 'text' }));
    await app.inject({ url: '/wait' });
    await logged();
    const m = /^GET \/wait 200 (\d+)µs$/.exec((await logged())[0]);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual((WAIT_MS - 5) * 1000);
    expect(Number(m![1])).toBeLessThan(60 * 1_000_000);
  });

  it('RID-05 with ids on, failures carry X-Request-Id too', async () => {
    const { app, logged } = make(logger.with({ format: 'json', requestId: true }));
    const res = await app.inject({ url: '/fails' });
    expect(res.status).toBe(409);
    expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.parse((await logged())[0]).res.statusCode).toBe(409);
    expect((await app.inject({ url: '/nowhere' })).headers['x-request-id']).toBeDefined();
  });

  it('RID-07 LIMITS-05 a proxy id of up to 64 letters, digits, . _ - is used', async () => {
    const { app } = make(logger.with({ format: 'json', requestId: true }));
    const id = 'a.B_c-' + '9'.repeat(58);
    expect(id.length).toBe(64);
    const res = await app.inject({ url: '/id', headers: { 'x-request-id': id } });
    expect(res.headers['x-request-id']).toBe(id);
  });

  it('RID-08 LIMITS-05 a proxy id of 65 bytes is replaced', async () => {
    const { app } = make(logger.with({ format: 'json', requestId: true }));
    const id = 'a'.repeat(65);
    const res = await app.inject({ url: '/id', headers: { 'x-request-id': id } });
    expect(res.headers['x-request-id']).not.toBe(id);
    expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('RID-09 a proxy id with another character is replaced', async () => {
    const { app } = make(logger.with({ format: 'json', requestId: true }));
    for (const id of ['has space', 'semi;colon', 'é']) {
      const res = await app.inject({ url: '/id', headers: { 'x-request-id': id } });
      expect(res.headers['x-request-id']).not.toBe(id);
    }
  });
});
