import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import {
  App,
  Controller,
  Ctx,
  Get,
  Param,
  Redirect,
  Reply,
  Returns,
  headers,
  reply,
} from 'fw-http';
import { exchange, parseResponses } from '../support/raw';

/** True once a log line holds `text` (as it is escaped inside the JSON line). 500 bodies say only `internal server error`, the detail goes to the log. */
async function logged(lines: readonly string[], text: string): Promise<boolean> {
  await new Promise((r) => setImmediate(r));
  const escaped = JSON.stringify(text).slice(1, -1);
  return lines.some((l) => l.includes(escaped));
}

// CORE-34 over a real socket: a header value fw will not put on the wire (a character outside
// ASCII: above U+00FF, U+2028 in a redirect's Location, or obs-text) must be a 500 naming the header, never a reset
// connection; the connection then serves the next request.

const dir = mkdtempSync(join(tmpdir(), 'fw-header-values-'));
const file = join(dir, 'a.txt');
writeFileSync(file, 'file body');

@Controller()
class WideController {
  @Get('/set/{which}') set(@Param('which') which: string, c: Ctx) {
    c.setHeader('x-wide', which === 'above' ? 'caf\u0101' : 'caf\u00e9');
    c.sendText(200, 'sent');
  }
  @Get('/go') go(c: Ctx) {
    c.redirect(302, '/next\u2028line');
  }
  @Get('/returned-redirect')
  @Returns(Redirect(302))
  returnedRedirect() {
    return Redirect.to('/a\u2028b');
  }
  @Get('/returned-header')
  @Returns(Reply(String))
  returnedHeader() {
    return reply(200, 'five', headers.of([{ name: 'x-returned', value: '\u20ac5' }]));
  }
  @Get('/stream') stream(c: Ctx) {
    c.stream(200, 'text/plain; title=\u0101');
  }
  @Get('/file') file(c: Ctx) {
    return c.sendFile({ file, contentType: 'text/plain; title=\u0101' });
  }
  @Get('/file-cache') fileCache(c: Ctx) {
    return c.sendFile({ file, contentType: 'text/plain', cacheControl: 'max-age=\u0661' });
  }
  @Returns(String)
  @Get('/ok')
  ok() {
    return 'ok';
  }
}

describe('CORE-34 header values that cannot be sent, over a real socket', () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(WideController);
  let port = 0;
  beforeAll(async () => (port = (await app.listen()).port));
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends `path` then `/ok` on one kept connection: the failure answer, and proof the connection still serves. */
  async function thenOk(path: string) {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const first = await exchange(socket, `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, {
      keepOpen: true,
      quietMs: 250,
    });
    expect(first.closed).toBe(false);
    const [failure] = parseResponses(first.text);
    const second = await exchange(socket, 'GET /ok HTTP/1.1\r\nHost: x\r\n\r\n', { quietMs: 250 });
    return { failure, next: parseResponses(second.text)[0] };
  }

  it.each([
    ['/set/above', 'x-wide', 'holds a character outside ASCII'],
    ['/go', 'location', 'holds a character outside ASCII'],
    ['/returned-redirect', 'location', 'holds a character outside ASCII'],
    ['/returned-header', 'x-returned', 'holds a character outside ASCII'],
    ['/stream', 'content-type', 'holds a character outside ASCII'],
    ['/file', 'content-type', 'holds a character outside ASCII'],
    ['/file-cache', 'cache-control', 'holds a character outside ASCII'],
  ])(
    'CORE-34 %s: a 500 naming "%s" in the failure shape, and the connection goes on',
    async (path, name, why) => {
      const { failure, next } = await thenOk(path);
      expect(failure.status).toBe(500);
      expect(JSON.parse(failure.body)).toEqual({ error: 'internal server error', status: 500 });
      expect(await logged(lines, `header "${name}" ${why}`)).toBe(true);
      expect(next.status).toBe(200);
      expect(next.body).toBe('ok');
    },
  );

  it('CORE-34 obs-text (0x80-0xFF) is refused too: Node would write it as one byte or two depending on the body', async () => {
    const { failure, next } = await thenOk('/set/latin1');
    expect(failure.status).toBe(500);
    expect(JSON.parse(failure.body)).toEqual({ error: 'internal server error', status: 500 });
    expect(await logged(lines, 'header "x-wide" holds a character outside ASCII')).toBe(true);
    expect(next.status).toBe(200);
  });

  it('a refused head is not reported as sent: no "failed after answering" warning', async () => {
    await thenOk('/set/above');
    await new Promise((r) => setImmediate(r));
    expect(lines.join('\n')).not.toMatch(/failed after answering/);
  });
});
