import { createServer, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { App, Controller, Get, Param, Returns } from 'fw-http';
import { parseResponses, raw } from '../support/raw';

// LIMITS-13 asks pipelined answers in one write. node:http gives a queued answer its socket only
// after the previous one is written and uncorks at the end of each, so no server on it writes
// once for many; the rule's resolution is that fw answers every pipelined request,
// complete and in order, with no write of its own beyond raw node:http's, and that its pipelined
// throughput is within noise of raw node:http's (`npm run bench`, "pipelined ×16").

const N = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class Numbered {
  constructor(readonly n: number) {}
}

@Controller()
class Numbers {
  // Later requests often finish first (the delays go down and up again): the answers must still
  // leave in the order the requests came.
  @Get('/n/{n}')
  @Returns(Numbered)
  async slow(@Param('n') n: number) {
    await sleep((N - n) % 7);
    return new Numbered(n);
  }

  @Get('/now/{n}')
  @Returns(Numbered)
  now(@Param('n') n: number) {
    return new Numbered(n);
  }
}

const pipelined = (path: string) =>
  Array.from({ length: N }, (_, i) => `GET ${path}/${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join('');

/** Calls to the socket's write hooks (one per write to the kernel, a corked batch is one) on `port`'s server side. */
async function serverWrites(port: number, run: () => Promise<unknown>): Promise<number> {
  const proto = Socket.prototype as unknown as Record<'_write' | '_writev', Function>;
  const write = proto._write;
  const writev = proto._writev;
  let writes = 0;
  const count = (inner: Function) =>
    function (this: Socket, ...args: unknown[]) {
      if (this.localPort === port) writes++;
      return inner.apply(this, args) as unknown;
    };
  proto._write = count(write);
  proto._writev = count(writev);
  try {
    await run();
  } finally {
    proto._write = write;
    proto._writev = writev;
  }
  return writes;
}

describe('pipelined requests (LIMITS-13)', () => {
  const app = new App({ log: () => {} }).controllers(Numbers);
  // The same answers by hand, for the count of writes.
  const plain: Server = createServer((req, res) => {
    const body = JSON.stringify({ n: Number(req.url!.split('/')[2]) });
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
  let port = 0;
  let plainPort = 0;
  beforeAll(async () => {
    port = (await app.listen({ port: 0 })).port;
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    plainPort = (plain.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await app.close();
    await new Promise((r) => plain.close(r));
  });

  it('LIMITS-13 50 requests pipelined on one socket get 50 complete answers, in order', async () => {
    const { text, closed } = await raw(port, pipelined('/n'), { quietMs: 500 });
    expect(closed).toBe(false);
    const answers = parseResponses(text);
    expect(answers).toHaveLength(N);
    answers.forEach((a, i) => {
      expect(a.status).toBe(200);
      expect(Buffer.byteLength(a.body)).toBe(Number(a.headers['content-length']));
      expect(JSON.parse(a.body)).toEqual({ n: i });
    });
  });

  it('LIMITS-13 fw writes to the socket no more often than raw node:http for the same 50 pipelined requests', async () => {
    let fwAnswers: unknown[] = [];
    let plainAnswers: unknown[] = [];
    const fw = await serverWrites(port, async () => {
      fwAnswers = parseResponses((await raw(port, pipelined('/now'), { quietMs: 500 })).text);
    });
    const byHand = await serverWrites(plainPort, async () => {
      plainAnswers = parseResponses(
        (await raw(plainPort, pipelined('/now'), { quietMs: 500 })).text,
      );
    });
    expect(fwAnswers).toHaveLength(N);
    expect(plainAnswers).toHaveLength(N);
    expect(byHand).toBeGreaterThan(0);
    expect(fw).toBeLessThanOrEqual(byHand);
  });
});
