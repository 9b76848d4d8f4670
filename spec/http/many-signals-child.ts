import { App, Controller, Ctx, Get, Returns } from 'fw-http';

// Run by shutdown-signal.spec.ts: 30 requests in flight at once, each reading c.signal; prints
// "30 x <status>" (any warning goes to stderr, which the spec reads).

let release: () => void = () => {};
const gate = new Promise<void>((r) => (release = r));

@Controller()
class Many {
  @Returns(String)
  @Get('/wait')
  async wait(c: Ctx) {
    void c.signal.aborted;
    await gate;
    return 'ok';
  }
}

async function main(): Promise<void> {
  const app = new App({ log: () => {} }).controllers(Many);
  const all = Array.from({ length: 30 }, () => app.inject({ url: '/wait' }));
  await new Promise((r) => setTimeout(r, 50));
  release();
  const statuses = new Set((await Promise.all(all)).map((r) => r.status));
  await app.close();
  await new Promise((r) => setTimeout(r, 20));
  process.stdout.write(`30 x ${[...statuses].join(',')}\n`);
}

void main();
