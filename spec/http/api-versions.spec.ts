import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, Controller, Get, Idempotent, Post, Returns, Status } from 'fw-http';
import { ApiVersion, Deprecated } from 'fw-http/openapi';
import { MemoryStore, Space } from 'fw-http/cache';
import { run as cli } from '../../lib/cli';

// @ApiVersion by URI or by header, one document per version, and @Deprecated with RFC 9745
// Deprecation / RFC 8594 Sunset headers, over real sockets.

class Item {
  id!: string;
}
const SUNSET = new Date('2027-06-30T00:00:00Z');
const SINCE = new Date('2026-11-01T00:00:00Z');
const Orders = Space('v-orders', { ttlSeconds: 60, maxBytes: 4096 });

@Controller('/orders')
@ApiVersion('1')
@Deprecated({ since: SINCE, sunset: SUNSET, link: 'https://docs.example.com/v2' })
class OrdersV1 {
  @Get() @Returns(Item) list() {
    return { id: 'v1' };
  }
  @Post() @Idempotent(Orders) @Returns(Status(201, Item)) create() {
    return { id: `made-${++made}` };
  }
}
let made = 0;

@Controller('/orders')
@ApiVersion('2', '10')
class OrdersV2 {
  @Get() @Returns(Item) list() {
    return { id: 'v2' };
  }
}

@Controller('/status')
class Neutral {
  @Get() @Returns(Item) status() {
    return { id: 'neutral' };
  }
}

function app(versions: ConstructorParameters<typeof App>[0]) {
  return new App({ log: () => {}, title: 'versions', version: '9', ...versions })
    .controllers(OrdersV1, OrdersV2, Neutral)
    .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })))
    .openapi()
    .docs();
}

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('versions by URI', () => {
  let a: App;
  let url: string;
  beforeAll(async () => {
    a = app({ versions: { by: 'uri' } });
    url = (await a.listen({ port: 0 })).url;
  });
  afterAll(() => a.close());

  it('serves each version under /v{version}; neutral routes stay at their path', async () => {
    expect(JSON.parse((await get(`${url}/v1/orders`)).text)).toEqual({ id: 'v1' });
    expect(JSON.parse((await get(`${url}/v2/orders`)).text)).toEqual({ id: 'v2' });
    expect(JSON.parse((await get(`${url}/v10/orders`)).text)).toEqual({ id: 'v2' });
    expect((await get(`${url}/orders`)).status).toBe(404);
    expect(JSON.parse((await get(`${url}/status`)).text)).toEqual({ id: 'neutral' });
  });

  it('one document per version at /openapi/v{version}.json; the whole one has them all', async () => {
    const all = JSON.parse((await get(`${url}/openapi.json`)).text);
    expect(Object.keys(all.paths).sort()).toEqual([
      '/status',
      '/v1/orders',
      '/v10/orders',
      '/v2/orders',
    ]);
    expect(all.paths['/v2/orders'].get['x-fw-version']).toBe('2');
    const v1 = JSON.parse((await get(`${url}/openapi/v1.json`)).text);
    expect(Object.keys(v1.paths).sort()).toEqual(['/status', '/v1/orders']);
    expect(v1.info.version).toBe('1');
    expect((await get(`${url}/openapi/v3.json`)).status).toBe(404);
  });

  it('the docs page offers every version document', async () => {
    const init = (await get(`${url}/docs/init.js`)).text;
    expect(init).toContain('{"url":"/openapi/v1.json","name":"v1"}');
    expect(init).toContain('{"url":"/openapi/v10.json","name":"v10"}');
    expect(init.indexOf('"v2"')).toBeLessThan(init.indexOf('"v10"')); // 2 before 10
  });

  it('@Deprecated answers carry Deprecation, Sunset and Link, and its operations say deprecated', async () => {
    const res = await get(`${url}/v1/orders`);
    expect(res.headers.get('deprecation')).toBe(`@${SINCE.getTime() / 1000}`);
    expect(res.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    expect(res.headers.get('link')).toBe('<https://docs.example.com/v2>; rel="deprecation"');
    expect((await get(`${url}/v2/orders`)).headers.get('deprecation')).toBeNull();
    const doc = a.document() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(doc.paths['/v1/orders']!.get!.deprecated).toBe(true);
    expect(doc.paths['/v2/orders']!.get!.deprecated).toBeUndefined();
    const ok = (doc.paths['/v1/orders']!.get!.responses as Record<string, { headers: object }>)[
      '200'
    ]!;
    expect(Object.keys(ok.headers)).toEqual(
      expect.arrayContaining(['Deprecation', 'Sunset', 'Link']),
    );
  });

  it('a replayed idempotent answer carries the deprecation headers too', async () => {
    const post = () =>
      fetch(`${url}/v1/orders`, { method: 'POST', headers: { 'idempotency-key': 'dep-1' } });
    const first = await post();
    const again = await post();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get('deprecation')).toBe(`@${SINCE.getTime() / 1000}`);
    expect(again.headers.get('sunset')).toBe(first.headers.get('sunset'));
  });

  it('the version documents validate as OpenAPI 3.2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fw-versions-'));
    try {
      const file = join(dir, 'v1.json');
      writeFileSync(file, (await get(`${url}/openapi/v1.json`)).text);
      const script = `
        import { Validator } from '@seriousme/openapi-schema-validator';
        import { readFileSync } from 'node:fs';
        console.log(JSON.stringify(await new Validator().validate(JSON.parse(readFileSync(process.argv[1], 'utf8')))));`;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--input-type=module', '-e', script, file],
        {
          cwd: join(__dirname, '..', '..'),
        },
      );
      expect(JSON.parse(stdout)).toMatchObject({ valid: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('versions by header', () => {
  let a: App;
  let url: string;
  beforeAll(async () => {
    a = app({ versions: { by: 'header' } });
    url = (await a.listen({ port: 0 })).url;
  });
  afterAll(() => a.close());

  it('Accept-Version picks the route; without it the highest version answers; Vary says so', async () => {
    const one = await get(`${url}/orders`, { 'accept-version': '1' });
    expect(JSON.parse(one.text)).toEqual({ id: 'v1' });
    expect(one.headers.get('vary')).toContain('Accept-Version');
    expect(JSON.parse((await get(`${url}/orders`, { 'accept-version': '2' })).text)).toEqual({
      id: 'v2',
    });
    expect(JSON.parse((await get(`${url}/orders`)).text)).toEqual({ id: 'v2' }); // default: 10 is v2's
    expect(a.defaultVersion).toBe('10');
  });

  it('a version no route serves is 404 without internal names', async () => {
    const res = await get(`${url}/orders`, { 'accept-version': '7' });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({
      error: 'version 7 of GET /orders does not exist',
      status: 404,
    });
  });

  it('the whole document describes the default version where two share a path', () => {
    const doc = a.document() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(doc.paths['/orders']!.get!['x-fw-version']).toBe('10');
  });

  it('a set default version wins over the highest', async () => {
    const b = app({ versions: { by: 'header', default: '1' } });
    const { url: u } = await b.listen({ port: 0 });
    try {
      expect(JSON.parse((await get(`${u}/orders`)).text)).toEqual({ id: 'v1' });
    } finally {
      await b.close();
    }
  });
});

describe('refusals', () => {
  it('@ApiVersion without the app setting, or a malformed version, is refused naming the route', () => {
    expect(() => new App({ log: () => {} }).controllers(OrdersV2).build()).toThrow(
      /GET \/orders \(OrdersV2\.list\): @ApiVersion needs the app to tell versions apart/,
    );
    @Controller('/x')
    class Bad {
      @Get() @ApiVersion('two words') @Returns(Item) x() {
        return { id: 'x' };
      }
    }
    expect(() =>
      new App({ log: () => {}, versions: { by: 'uri' } }).controllers(Bad).build(),
    ).toThrow(/GET \/x \(Bad\.x\): @ApiVersion\(two words\) is not a version/);
  });

  it('two routes of one method, path and version collide, under either strategy', () => {
    @Controller('/orders')
    @ApiVersion('2')
    class Again {
      @Get() @Returns(Item) list() {
        return { id: 'again' };
      }
    }
    for (const by of ['uri', 'header'] as const)
      expect(() =>
        new App({ log: () => {}, versions: { by } }).controllers(OrdersV2, Again).build(),
      ).toThrow(/duplicate route: GET \/(v2\/)?orders/);
  });
});

it('fw-http routes prints each route with its version', async () => {
  let out = '';
  const dir = mkdtempSync(join(tmpdir(), 'fw-versions-cli-'));
  try {
    const entry = join(dir, 'entry.js');
    writeFileSync(entry, 'module.exports = global.__versionsApp;');
    (global as Record<string, unknown>).__versionsApp = app({ versions: { by: 'uri' } });
    expect(
      await cli(['routes', entry], { out: (t) => void (out += t), err: () => undefined }),
    ).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  expect(out).toMatch(/GET\s+\/v1\/orders\s+OrdersV1\.list\s+no\s+-\s+1/);
  expect(out).toMatch(/POST\s+\/v1\/orders\s+OrdersV1\.create\s+yes\s+-\s+1/);
  expect(out).toMatch(/GET\s+\/status\s+Neutral\.status\s+no\s+-\s+-/);
});
