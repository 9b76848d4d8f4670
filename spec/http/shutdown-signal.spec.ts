import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { tsChild } from '../support/ts-child';
import { App, Controller, Ctx, Get, Returns } from 'fw-http';

// A handler cut short by close() answers 503 Canceled whichever way it waited: c.sleep, or
// something of its own rejecting with c.signal's reason (signal.throwIfAborted(), a stream given
// the signal). The reason used to be a plain Error, so the second way answered 500.

let entered: () => void = () => {};

@Controller()
class Waits {
  @Returns(String)
  @Get('/own')
  async own(c: Ctx) {
    entered();
    await new Promise((_resolve, reject) =>
      c.signal.addEventListener('abort', () => reject(c.signal.reason as Error), { once: true }),
    );
    return 'never';
  }
  @Returns(String)
  @Get('/sleep')
  async sleep(c: Ctx) {
    entered();
    await c.sleep(60_000);
    return 'never';
  }
}

/** Starts a GET of `path`, waits until its handler runs, closes the app: the status and body it got. */
async function cutShort(path: string): Promise<{ status: number; body: string }> {
  const app = new App({ log: () => {}, closeGraceMs: 50 }).controllers(Waits);
  const { port } = await app.listen();
  const inside = new Promise<void>((r) => (entered = r));
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
  await inside;
  await app.close();
  return answer;
}

describe('a request cut short by close()', () => {
  it.each(['/own', '/sleep'])(
    '%s: 503 Canceled, not 500, when close() aborts c.signal',
    async (path) => {
      const res = await cutShort(path);
      expect(res.status).toBe(503);
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String), status: 503 });
    },
  );
});

describe("the app's shutdown signal", () => {
  it('many requests in flight that read c.signal at once raise no MaxListenersExceededWarning (each listens on the app-wide shutdown signal while it runs)', () => {
    // In a process of its own: jest's sandbox does not see the process's warnings.
    const { command, args } = tsChild('spec/http/many-signals-child.ts');
    const run = spawnSync(command, args, { cwd: process.cwd(), encoding: 'utf8', timeout: 60_000 });
    expect(run.stdout.trim()).toBe('30 x 200');
    expect(run.stderr).not.toContain('MaxListenersExceededWarning');
  }, 60_000);
});
