import { request, type IncomingMessage } from 'node:http';
import { App, Controller, Ctx, Get } from 'fw';

let release: (() => void) | null = null;
let gone: Promise<string> | null = null;

@Controller()
class EventsController {
  @Get('/three') async three(c: Ctx) {
    const events = c.events();
    await events.send({ data: { n: 1 } });
    await events.send({ event: 'note', id: '7', data: 'line one\nline two' });
    await events.comment('keep-alive');
    await events.send({ data: 'x'.repeat(2000) });
    events.close();
  }
  @Get('/gated') async gated(c: Ctx) {
    const events = c.events();
    await events.send({ data: 'first' });
    await new Promise<void>((resolve) => (release = resolve));
    await events.send({ data: 'second' });
    events.close();
  }
  @Get('/forever') async forever(c: Ctx) {
    const events = c.events();
    gone = (async () => {
      try {
        for (;;) {
          await events.send({ data: 'tick' });
          await new Promise((r) => setTimeout(r, 10));
        }
      } catch (e) {
        return (e as Error).message;
      }
    })();
    await events.closed;
  }
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request({ port, path, headers }, resolve).on('error', reject).end());
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

describe('events', () => {
  const app = new App({ log: () => {} }).controllers(EventsController).compress({ minBytes: 1 });
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(() => app.close());

  it('EVENTS-01 c.events() turns the answer into a text/event-stream with event:, id: and data: lines (OPEN-05)', async () => {
    const res = await get(port, '/three');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream');
    expect(res.headers['cache-control']).toBe('no-cache');
    const body = await readAll(res);
    expect(body).toBe(`data: {"n":1}\n\nevent: note\nid: 7\ndata: line one\ndata: line two\n\n: keep-alive\n\ndata: ${'x'.repeat(2000)}\n\n`);
  });

  it('EVENTS-02 each event reaches the client when it is sent: the first arrives before the second is written', async () => {
    release = null;
    const res = await get(port, '/gated');
    const first = await new Promise<string>((resolve) => res.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    expect(first).toBe('data: first\n\n');
    expect(release).not.toBeNull(); // the handler is still waiting: nothing else was sent
    release!();
    expect(await readAll(res)).toBe('data: second\n\n');
  });

  it('EVENTS-03 an event stream is never compressed, even with app.compress on and Accept-Encoding: gzip', async () => {
    const res = await get(port, '/three', { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(await readAll(res)).toContain('data: {"n":1}\n\n');
  });

  it('EVENTS-01 send() rejects (Canceled) once the client has gone away', async () => {
    gone = null;
    const res = await get(port, '/forever');
    await new Promise((resolve) => res.once('data', resolve));
    res.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(await gone).toMatch(/closed|went away/);
  });
});
