import { App, Authorization, Body, Controller, Ctx, Get, Header, Param, Post, Query, fail, type BasicCredentials, type BearerCredentials } from 'fw';
import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

class Page {
  @IsInt() @Min(1) @Max(100) qty!: number;
  @IsOptional() @IsString() sort?: string;
}

let resolutions = 0;
class Account {
  constructor(readonly id: string) {}
  static resolve(c: Ctx): Account {
    resolutions++;
    const token = c.authorization('bearer').value;
    if (token !== 'alice-token') throw fail.unauthorized('unknown token');
    return new Account('alice');
  }
}

class SlowAccount {
  constructor(readonly id: string) {}
  static async resolve(): Promise<SlowAccount> {
    await new Promise((r) => setTimeout(r, 2));
    return new SlowAccount('slow');
  }
}

@Controller()
class ArgsController {
  @Post('/orders') create(@Body() order: NewOrder) {
    return { order, isInstance: order instanceof NewOrder };
  }
  @Get('/n/{id}') num(@Param('id') id: number) {
    return { id, type: typeof id };
  }
  @Get('/b/{flag}') bool(@Param('flag') flag: boolean) {
    return { flag };
  }
  @Get('/s/{name}') str(@Param('name') name: string) {
    return { name };
  }
  @Get('/page') page(@Query() page: Page) {
    return page;
  }
  @Get('/one') one(@Query('limit') limit: number, @Query('q') q: string) {
    return { limit, q };
  }
  @Get('/hdr') hdr(@Header('X-Tenant') tenant: string | null) {
    return { tenant };
  }
  @Get('/bearer') bearer(@Authorization('bearer') auth: BearerCredentials) {
    return auth;
  }
  @Get('/basic') basic(@Authorization('basic') auth: BasicCredentials) {
    return auth;
  }
  @Get('/me') me(account: Account, c: Ctx) {
    const again = c.resolve(Account);
    return { id: account.id, same: again === account };
  }
  @Get('/slow') slow(account: SlowAccount, c: Ctx) {
    return { id: account.id, same: c.resolve(SlowAccount) === account };
  }
}

const app = new App({ log: () => {} }).controllers(ArgsController);
const post = (body: unknown, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: '/orders', body: body as object, headers });

describe('@Body', () => {
  it('CORE-21 reads JSON into the declared class', async () => {
    const res = await post({ sku: 'abc', qty: 2 });
    expect(res.json()).toEqual({ order: { sku: 'abc', qty: 2 }, isInstance: true });
  });

  it('CORE-24 a body that is not valid JSON is 400', async () => {
    const res = await post('{"sku": ', { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error: 'body: invalid JSON', status: 400 });
  });

  it('CORE-25 a body that fails validation is 400 naming the first failing field', async () => {
    const res = await post({ sku: '', qty: 500 });
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toMatch(/^body\.sku: /);
    expect((await post({ sku: 'a', qty: 'two' })).json<{ error: string }>().error).toMatch(/^body\.qty: .*integer/);
    expect((await post({ qty: 1 })).json<{ error: string }>().error).toMatch(/^body\.sku: /);
  });

  it('unknown fields in a body are ignored, not refused (OPEN-62)', async () => {
    const res = await post({ sku: 'a', qty: 1, admin: true });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ order: { sku: 'a', qty: 1 }, isInstance: true });
  });

  it('a body under another content type is 415', async () => {
    const res = await post('sku=a&qty=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect(res.json<{ error: string }>().error).toBe('body: content type must be application/json, got application/x-www-form-urlencoded');
  });

  it('a @Body over one megabyte is 413 (OPEN-62)', async () => {
    const res = await post(JSON.stringify({ sku: 'a'.repeat(1024 * 1024), qty: 1 }), { 'content-type': 'application/json' });
    expect(res.status).toBe(413);
  });
});

describe('path, query and header arguments', () => {
  it('CORE-22 a path param converts to its declared type, or is 400', async () => {
    expect((await app.inject({ url: '/n/42' })).json()).toEqual({ id: 42, type: 'number' });
    expect((await app.inject({ url: '/b/true' })).json()).toEqual({ flag: true });
    expect((await app.inject({ url: '/s/a%20b' })).json()).toEqual({ name: 'a b' });
    const bad = await app.inject({ url: '/n/forty' });
    expect(bad.status).toBe(400);
    expect(bad.json()).toEqual({ error: 'path param "id": not a number', status: 400 });
    expect((await app.inject({ url: '/b/maybe' })).status).toBe(400);
    expect((await app.inject({ url: '/s/%E0%A4%A' })).status).toBe(400);
  });

  it('CORE-23 a query value that does not fit its declared type is 400', async () => {
    expect((await app.inject({ url: '/page?qty=5&sort=new' })).json()).toEqual({ qty: 5, sort: 'new' });
    const bad = await app.inject({ url: '/page?qty=many' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ error: string }>().error).toMatch(/^query\.qty: /);
    expect((await app.inject({ url: '/page?qty=500' })).status).toBe(400);
    expect((await app.inject({ url: '/one?limit=3&q=x' })).json()).toEqual({ limit: 3, q: 'x' });
    expect((await app.inject({ url: '/one' })).json()).toEqual({ limit: null, q: null });
    expect((await app.inject({ url: '/one?limit=x' })).json()).toEqual({ error: 'query param "limit": not a number', status: 400 });
  });

  it('CORE-28 @Header gives the value, or null when absent', async () => {
    expect((await app.inject({ url: '/hdr', headers: { 'x-tenant': 't1' } })).json()).toEqual({ tenant: 't1' });
    expect((await app.inject({ url: '/hdr' })).json()).toEqual({ tenant: null });
  });
});

describe('authorization', () => {
  it('AUTH-01 @Authorization(bearer) gives the token as value', async () => {
    expect((await app.inject({ url: '/bearer', headers: { authorization: 'Bearer abc.def' } })).json()).toEqual({ scheme: 'bearer', value: 'abc.def' });
  });

  it('AUTH-02 @Authorization(basic) gives the decoded credentials', async () => {
    const res = await app.inject({ url: '/basic', headers: { authorization: 'Basic ' + Buffer.from('ann:s3:cret').toString('base64') } });
    expect(res.json()).toEqual({ scheme: 'basic', value: 'ann:s3:cret', user: 'ann', password: 's3:cret' });
  });

  it.each([
    ['AUTH-03 missing header', '/bearer', undefined, 'Bearer'],
    ['AUTH-04 another scheme', '/bearer', 'Basic YTpi', 'Bearer'],
    ['AUTH-05 an empty token', '/bearer', 'Bearer ', 'Bearer'],
    ['AUTH-06 Basic that does not decode', '/basic', 'Basic %%%not-base64', 'Basic realm="fw", charset="UTF-8"'],
    ['AUTH-06 Basic without a colon', '/basic', 'Basic ' + Buffer.from('nocolon').toString('base64'), 'Basic realm="fw", charset="UTF-8"'],
  ])('%s is 401 and AUTH-07 WWW-Authenticate names what is accepted', async (_name, url, header, challenge) => {
    const res = await app.inject({ url, headers: header === undefined ? {} : { authorization: header } });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(challenge);
    expect(res.json<{ status: number }>().status).toBe(401);
  });

  it('AUTH-08 AUTH-09 a resolved value comes as a parameter or from c.resolve, worked out once per request', async () => {
    resolutions = 0;
    const res = await app.inject({ url: '/me', headers: { authorization: 'Bearer alice-token' } });
    expect(res.json()).toEqual({ id: 'alice', same: true });
    expect(resolutions).toBe(1);
  });

  it('AUTH-09 an async resolver is awaited once and then c.resolve gives the same value', async () => {
    expect((await app.inject({ url: '/slow' })).json()).toEqual({ id: 'slow', same: true });
  });

  it('AUTH-10 a resolver that fails answers that failure and the handler does not run', async () => {
    const res = await app.inject({ url: '/me', headers: { authorization: 'Bearer mallory' } });
    expect(res.json()).toEqual({ error: 'unknown token', status: 401 });
    expect((await app.inject({ url: '/me' })).headers['www-authenticate']).toBe('Bearer');
  });
});
