import { request } from 'node:http';
import { IsArray, IsOptional, IsString } from 'class-validator';
import { App, Body, Controller, Form, Get, Post, Query, Returns } from 'fw-http';
import { getOnce, heapAfterGc, openDescriptors, settlesWithin } from '../support/hostile';
import { SlowNode, TreeNode } from '../support/self-holding';

// Repeated keys and deep nesting against a real server. Reading a query or a form is linear in its
// size and bounded in parameters (maxParams); reading a body into a class that holds itself is
// bounded in depth (maxDepth). No assertion is timed: a request that today's quadratic reading
// would hold for an hour simply fails the test by its ordinary timeout.

class Tags {
  @IsOptional() @IsArray() @IsString({ each: true }) tag?: string[];
}

@Controller()
class Readers {
  @Returns(Object)
  @Post('/form')
  form(@Form() t: Tags) {
    return { tags: t.tag?.length ?? 0 };
  }
  @Returns(Object)
  @Get('/query')
  query(@Query() t: Tags) {
    return { tags: t.tag?.length ?? 0 };
  }
  @Returns(Object)
  @Post('/tree')
  tree(@Body() t: TreeNode) {
    return { name: t.name };
  }
  @Returns(Object)
  @Post('/slow-tree')
  slowTree(@Body() t: SlowNode) {
    return { name: t.name };
  }
  @Returns(String)
  @Get('/plain')
  plain() {
    return 'plain';
  }
}

/** One request on a fresh connection: status and body text. */
function send(
  port: number,
  method: string,
  path: string,
  body?: string,
  type?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (body !== undefined) {
      headers['content-type'] = type ?? 'application/x-www-form-urlencoded';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const MIB = 1024 * 1024;
/** `tag=x&` repeated to exactly 1 MiB (the body limit), the last `&` dropped. */
const oneKeyForm = (() => {
  const piece = 'tag=x&';
  const text = piece.repeat(Math.floor(MIB / piece.length));
  return text.slice(0, -1);
})();
const oneKeyCount = Math.floor(MIB / 'tag=x&'.length);
/** `{"name":"n","child":…}` `levels` objects deep. */
const tree = (levels: number): string =>
  '{"name":"n","child":'.repeat(levels - 1) + '{"name":"n"}' + '}'.repeat(levels - 1);

describe('hostile readers: repeated keys and deep nesting', () => {
  const app = new App({ log: () => {} }).controllers(Readers);
  // The same routes with the parameter bound lifted, so the whole 1 MiB form is read.
  const unbounded = new App({ log: () => {}, maxParams: 1 << 20 }).controllers(Readers);
  let port = 0;
  let wide = 0;
  let fdsBefore = 0;
  let heapBefore = 0;
  beforeAll(async () => {
    port = (await app.listen()).port;
    wide = (await unbounded.listen()).port;
    // Warm both so the baselines include what the first request allocates once.
    await send(port, 'POST', '/form', 'tag=a');
    await send(wide, 'POST', '/form', 'tag=a');
    fdsBefore = openDescriptors();
    heapBefore = await heapAfterGc();
  });
  afterAll(async () => {
    await app.close();
    await unbounded.close();
  });

  async function stillServes(on: number): Promise<void> {
    expect(await getOnce(on, '/plain')).toEqual({ status: 200, body: 'plain' });
    expect(await send(on, 'POST', '/form', 'tag=a&tag=b')).toEqual({
      status: 200,
      body: '{"tags":2}',
    });
  }

  it('a 1 MiB form of one repeated key is refused at maxParams (400) and the server goes on', async () => {
    expect(Buffer.byteLength(oneKeyForm)).toBeLessThanOrEqual(MIB);
    const res = await send(port, 'POST', '/form', oneKeyForm);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: 'form: more than 10000 parameters',
      status: 400,
    });
    await stillServes(port);
  });

  it('a 1 MiB form of one repeated key is read in full where maxParams allows it', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await send(wide, 'POST', '/form', oneKeyForm);
      expect(res).toEqual({ status: 200, body: JSON.stringify({ tags: oneKeyCount }) });
    }
    await stillServes(wide);
  });

  it('a 15 KB query of one repeated key is read and the server goes on', async () => {
    const query = 'tag&'.repeat(3750).slice(0, -1);
    for (let i = 0; i < 5; i++)
      expect(await send(port, 'GET', '/query?' + query)).toEqual({
        status: 200,
        body: '{"tags":3750}',
      });
    await stillServes(port);
  });

  it('a body nested 45,000 objects deep into a class that holds itself is 400 naming the path, not a stack overflow', async () => {
    const body = tree(45_000);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MIB);
    for (const path of ['/tree', '/slow-tree']) {
      const res = await send(port, 'POST', path, body, 'application/json');
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error).toMatch(/^body\.child\.child.*: nested deeper than 64$/);
    }
    await stillServes(port);
  });

  it('JSON nested half a million arrays deep is 400', async () => {
    const res = await send(
      port,
      'POST',
      '/tree',
      '['.repeat(500_000) + ']'.repeat(500_000),
      'application/json',
    );
    expect(res.status).toBe(400);
    await stillServes(port);
  });

  it('afterwards descriptors and the heap after GC are back within bounds', async () => {
    expect(await settlesWithin(openDescriptors, fdsBefore + 2)).toBeLessThanOrEqual(fdsBefore + 2);
    expect(await settlesWithin(heapAfterGc, heapBefore + 16 * MIB)).toBeLessThanOrEqual(
      heapBefore + 16 * MIB,
    );
  });
});
