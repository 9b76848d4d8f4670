import { App, Controller, Ctx, EventStream, Get, Idempotent, Post, Reply, Returns } from 'fw-http';
import { MemoryStore, Space } from 'fw-http/cache';

// A failure sent to a client names the route by method and path at most. The route's label
// (`POST /i/big (I.big)`: the controller and method are the program's internals) stays in the log,
// and a 500 body says `internal server error` and nothing else.

const Big = Space('big', { ttlSeconds: 60, maxBytes: 8192, maxBytesPerCaller: 4096 });

@Controller('/i')
class I {
  @Post('/big')
  @Idempotent(Big, { by: () => 'caller-1' })
  @Returns(Object)
  big() {
    return { pad: 'x'.repeat(3000) };
  }
  @Get('/undeclared')
  @Returns(Reply({ 200: Object }))
  undeclared() {
    return { status: 404, value: {} } as never;
  }
  @Get('/events')
  @Returns(EventStream)
  events(_c: Ctx) {}
  @Get('/bare')
  bare() {
    return { leaked: true } as unknown as void;
  }
}

describe('internal names never reach clients', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) })
    .controllers(I)
    .provide(Big.open(new MemoryStore({ bytes: 1024 * 1024 })));
  const logged = async (text: string) => {
    await new Promise((r) => setImmediate(r));
    return lines.some((l) => l.includes(text));
  };

  it('a 4xx message that carries the route label is sent with method and path only; the log keeps the label', async () => {
    const post = (key: string) =>
      app.inject({ method: 'POST', url: '/i/big', headers: { 'idempotency-key': key } });
    let over = await post('k-0');
    for (let i = 1; i < 10 && over.status === 200; i++) over = await post(`k-${i}`);
    expect(over.status).toBe(429);
    const { error } = over.json<{ error: string }>();
    expect(error).toMatch(/^POST \/i\/big: this caller already holds 4096 bytes/);
    expect(over.body).not.toContain('I.big');
    expect(await logged('POST /i/big (I.big): CallerOverBudget')).toBe(true);
  });

  it.each([
    ['/i/undeclared', 'I.undeclared', 'UndeclaredAnswer'],
    ['/i/events', 'I.events', 'NotAnEventStream'],
    ['/i/bare', 'I.bare', 'UndeclaredAnswer'],
  ])(
    '%s: the 500 body says internal server error and nothing else; the log names %s',
    async (url, name, code) => {
      const res = await app.inject({ url });
      expect(res.status).toBe(500);
      expect(res.body).toBe('{"error":"internal server error","status":500}');
      expect(await logged(`(${name}): ${code}`)).toBe(true);
    },
  );
});
