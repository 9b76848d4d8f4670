import {
  App,
  Authorization,
  Body,
  Controller,
  Ctx,
  Form,
  Get,
  Header,
  Param,
  Post,
  Query,
  fail,
  type BasicCredentials,
  type BearerCredentials,
  Returns,
} from 'fw-http';
import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { SlowNode, TreeNode } from '../support/self-holding';

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
  @Returns(Object)
  @Post('/orders')
  create(@Body() order: NewOrder) {
    return { order, isInstance: order instanceof NewOrder };
  }
  @Returns(Object)
  @Get('/n/{id}')
  num(@Param('id') id: number) {
    return { id, type: typeof id };
  }
  @Returns(Object)
  @Get('/b/{flag}')
  bool(@Param('flag') flag: boolean) {
    return { flag };
  }
  @Returns(Object)
  @Get('/s/{name}')
  str(@Param('name') name: string) {
    return { name };
  }
  @Returns(Object)
  @Get('/page')
  page(@Query() page: Page) {
    return page;
  }
  @Returns(Object)
  @Get('/one')
  one(@Query('limit') limit: number, @Query('q') q: string) {
    return { limit, q };
  }
  @Returns(Object)
  @Get('/hdr')
  hdr(@Header('X-Tenant') tenant: string | null) {
    return { tenant };
  }
  @Returns(Object)
  @Get('/bearer')
  bearer(@Authorization('bearer') auth: BearerCredentials) {
    return auth;
  }
  @Returns(Object)
  @Get('/basic')
  basic(@Authorization('basic') auth: BasicCredentials) {
    return auth;
  }
  @Returns(Object)
  @Get('/me')
  me(account: Account, c: Ctx) {
    const again = c.resolve(Account);
    return { id: account.id, same: again === account };
  }
  @Returns(Object)
  @Get('/slow')
  slow(account: SlowAccount, c: Ctx) {
    return { id: account.id, same: c.resolve(SlowAccount) === account };
  }
}

const app = new App({ log: () => {} }).controllers(ArgsController);
const post = (body: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/orders', body: body as object, headers });

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
    expect((await post({ sku: 'a', qty: 'two' })).json<{ error: string }>().error).toMatch(
      /^body\.qty: .*integer/,
    );
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
    expect(res.json<{ error: string }>().error).toBe(
      'body: content type must be application/json, got application/x-www-form-urlencoded',
    );
  });

  it('a @Body over one megabyte is 413 (OPEN-62)', async () => {
    const res = await post(JSON.stringify({ sku: 'a'.repeat(1024 * 1024), qty: 1 }), {
      'content-type': 'application/json',
    });
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
    expect((await app.inject({ url: '/page?qty=5&sort=new' })).json()).toEqual({
      qty: 5,
      sort: 'new',
    });
    const bad = await app.inject({ url: '/page?qty=many' });
    expect(bad.status).toBe(400);
    expect(bad.json<{ error: string }>().error).toMatch(/^query\.qty: /);
    expect((await app.inject({ url: '/page?qty=500' })).status).toBe(400);
    expect((await app.inject({ url: '/one?limit=3&q=x' })).json()).toEqual({ limit: 3, q: 'x' });
    expect((await app.inject({ url: '/one' })).json()).toEqual({ limit: null, q: null });
    expect((await app.inject({ url: '/one?limit=x' })).json()).toEqual({
      error: 'query param "limit": not a number',
      status: 400,
    });
  });

  it('CORE-28 @Header gives the value, or null when absent', async () => {
    expect((await app.inject({ url: '/hdr', headers: { 'x-tenant': 't1' } })).json()).toEqual({
      tenant: 't1',
    });
    expect((await app.inject({ url: '/hdr' })).json()).toEqual({ tenant: null });
  });
});

describe('authorization', () => {
  it('AUTH-01 @Authorization(bearer) gives the token as value', async () => {
    expect(
      (await app.inject({ url: '/bearer', headers: { authorization: 'Bearer abc.def' } })).json(),
    ).toEqual({ scheme: 'bearer', value: 'abc.def' });
  });

  it('AUTH-02 @Authorization(basic) gives the decoded credentials', async () => {
    const res = await app.inject({
      url: '/basic',
      headers: { authorization: 'Basic ' + Buffer.from('ann:s3:cret').toString('base64') },
    });
    expect(res.json()).toEqual({
      scheme: 'basic',
      value: 'ann:s3:cret',
      user: 'ann',
      password: 's3:cret',
    });
  });

  it.each([
    ['AUTH-03 missing header', '/bearer', undefined, 'Bearer'],
    ['AUTH-04 another scheme', '/bearer', 'Basic YTpi', 'Bearer'],
    ['AUTH-05 an empty token', '/bearer', 'Bearer ', 'Bearer'],
    [
      'AUTH-06 Basic that does not decode',
      '/basic',
      'Basic %%%not-base64',
      'Basic realm="fw", charset="UTF-8"',
    ],
    [
      'AUTH-06 Basic without a colon',
      '/basic',
      'Basic ' + Buffer.from('nocolon').toString('base64'),
      'Basic realm="fw", charset="UTF-8"',
    ],
  ])(
    '%s is 401 and AUTH-07 WWW-Authenticate names what is accepted',
    async (_name, url, header, challenge) => {
      const res = await app.inject({
        url,
        headers: header === undefined ? {} : { authorization: header },
      });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(challenge);
      expect(res.json<{ status: number }>().status).toBe(401);
    },
  );

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

// Readers' inputs are built with no prototype: a field may be named like anything on
// Object.prototype or Array.prototype, and a repeated `__proto__` is just an undeclared key.
class Names {
  @IsInt() qty!: number;
  @IsOptional() @IsString() keys?: string;
  @IsOptional() @IsString() values?: string;
}
// `constructor` cannot be declared in a class body, nor `toString` as a string: decorate them by hand.
for (const name of ['constructor', 'toString']) {
  IsOptional()(Names.prototype, name);
  IsString()(Names.prototype, name);
}

/** The instance's own fields, a function among them spelled out (JSON would drop it). */
const own = (n: object): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(n).map(([k, v]) => [
      k,
      typeof v === 'function' ? `function ${(v as Function).name}` : v,
    ]),
  );

@Controller()
class InputController {
  @Returns(Object)
  @Get('/names')
  query(@Query() n: Names) {
    return own(n);
  }
  @Returns(Object)
  @Post('/names-form')
  form(@Form() n: Names) {
    return own(n);
  }
  @Returns(Object)
  @Post('/names-body')
  body(@Body() n: Names) {
    return own(n);
  }
  @Returns(Object)
  @Get('/one-name')
  one(@Query('qty') qty: number) {
    return { qty };
  }
  @Returns(Object)
  @Post('/tree')
  tree(@Body() t: TreeNode) {
    let depth = 0;
    for (let n: TreeNode | undefined = t; n !== undefined; n = n.child) depth++;
    return { depth, isNode: t instanceof TreeNode };
  }
  @Returns(Object)
  @Post('/slow-tree')
  slowTree(@Body() t: SlowNode) {
    let depth = 0;
    for (let n: SlowNode | undefined = t; n !== undefined; n = n.child) depth++;
    return { depth, isNode: t instanceof SlowNode };
  }
}

const inputs = new App({ log: () => {} }).controllers(InputController);
const small = new App({ log: () => {}, maxParams: 3, maxDepth: 3 }).controllers(InputController);
const formTo = (on: App, body: string) =>
  on.inject({
    method: 'POST',
    url: '/names-form',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
const jsonTo = (on: App, url: string, body: string) =>
  on.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, body });
/** `{"name":"n","child":{…}}` with `levels` objects in all. */
const tree = (levels: number): string =>
  '{"name":"n","child":'.repeat(levels - 1) + '{"name":"n"}' + '}'.repeat(levels - 1);

describe('readers take fields named like built-ins', () => {
  const all = { qty: 1, keys: 'k', values: 'v', constructor: 'c', toString: 't' };
  const sent = 'qty=1&keys=k&values=v&constructor=c&toString=t';

  it('a query class reads fields named keys, values, constructor and toString', async () => {
    expect((await inputs.inject({ url: '/names?' + sent })).json()).toEqual(all);
    expect((await inputs.inject({ url: '/names?qty=1' })).json()).toEqual({ qty: 1 });
  });

  it('a form reads fields named keys, values, constructor and toString', async () => {
    expect((await formTo(inputs, sent)).json()).toEqual(all);
    expect((await formTo(inputs, 'qty=1')).json()).toEqual({ qty: 1 });
  });

  it('a body reads fields named keys, values, constructor and toString', async () => {
    expect((await jsonTo(inputs, '/names-body', JSON.stringify(all))).json()).toEqual(all);
    expect((await jsonTo(inputs, '/names-body', '{"qty":1}')).json()).toEqual({ qty: 1 });
  });

  it('a repeated __proto__ in a query changes nothing and does not refuse a valid request', async () => {
    const res = await inputs.inject({ url: '/names?qty=1&__proto__=x&__proto__=y&__proto__=z' });
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ qty: 1 });
    expect((await inputs.inject({ url: '/names?__proto__=a&__proto__=b&' + sent })).json()).toEqual(
      all,
    );
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('a repeated __proto__ in a form changes nothing and does not refuse a valid request', async () => {
    const res = await formTo(inputs, 'qty=1&__proto__=x&__proto__=y&__proto__=z');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ qty: 1 });
    expect((await formTo(inputs, '__proto__=a&__proto__=b&' + sent)).json()).toEqual(all);
  });

  it('a __proto__ key in a JSON body changes nothing', async () => {
    const res = await jsonTo(inputs, '/names-body', '{"qty":1,"__proto__":["x","y"],"keys":"k"}');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ qty: 1, keys: 'k' });
  });
});

describe('the number of query and form parameters is bounded (maxParams, default 10,000)', () => {
  const params = (n: number): string =>
    ['qty=1', ...Array.from({ length: n - 1 }, (_, i) => `p${i}=${i}`)].join('&');

  it('a form of exactly 10,000 parameters is read, and one of 10,001 is 400 naming the bound', async () => {
    expect((await formTo(inputs, params(10_000))).json()).toEqual({ qty: 1 });
    const over = await formTo(inputs, params(10_001));
    expect(over.status).toBe(400);
    expect(over.json()).toEqual({ error: 'form: more than 10000 parameters', status: 400 });
  });

  it('a query of exactly 10,000 parameters is read, and one of 10,001 is 400 naming the bound', async () => {
    expect((await inputs.inject({ url: '/names?' + params(10_000) })).json()).toEqual({ qty: 1 });
    const over = await inputs.inject({ url: '/names?' + params(10_001) });
    expect(over.status).toBe(400);
    expect(over.json()).toEqual({ error: 'query: more than 10000 parameters', status: 400 });
  });

  it('the bound is the App option maxParams, for query classes, single query values and forms', async () => {
    expect((await small.inject({ url: '/names?' + params(3) })).json()).toEqual({ qty: 1 });
    expect((await small.inject({ url: '/names?' + params(4) })).json()).toEqual({
      error: 'query: more than 3 parameters',
      status: 400,
    });
    expect((await small.inject({ url: '/one-name?' + params(3) })).json()).toEqual({ qty: 1 });
    expect((await small.inject({ url: '/one-name?' + params(4) })).json()).toEqual({
      error: 'query: more than 3 parameters',
      status: 400,
    });
    expect((await formTo(small, params(3))).json()).toEqual({ qty: 1 });
    expect((await formTo(small, params(4))).json()).toEqual({
      error: 'form: more than 3 parameters',
      status: 400,
    });
  });

  it('empty pieces between separators are not parameters', async () => {
    expect((await small.inject({ url: '/names?&&qty=1&&a=1&&b=2&&' })).json()).toEqual({ qty: 1 });
  });
});

describe('a body nested into a class that holds itself is bounded (maxDepth, default 64)', () => {
  it('a body of exactly 64 nested objects is read, and one of 65 is 400 naming the path', async () => {
    expect((await jsonTo(inputs, '/tree', tree(64))).json()).toEqual({ depth: 64, isNode: true });
    const over = await jsonTo(inputs, '/tree', tree(65));
    expect(over.status).toBe(400);
    const error = over.json<{ error: string }>().error;
    expect(error).toMatch(/^body\.child\.child\.child.*: nested deeper than 64$/);
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(240);
  });

  it('the bound is the App option maxDepth, and the message names the whole short path', async () => {
    expect((await jsonTo(small, '/tree', tree(3))).json()).toEqual({ depth: 3, isNode: true });
    expect((await jsonTo(small, '/tree', tree(4))).json()).toEqual({
      error: 'body.child.child.child: nested deeper than 3',
      status: 400,
    });
  });

  it('a body nested 40,000 deep is 400, not a stack overflow', async () => {
    const res = await jsonTo(inputs, '/tree', tree(40_000));
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toMatch(/: nested deeper than 64$/);
    expect((await jsonTo(inputs, '/tree', tree(2))).json()).toEqual({ depth: 2, isNode: true });
  });

  it('a class read through class-validator has the same bound', async () => {
    expect((await jsonTo(small, '/slow-tree', tree(3))).json()).toEqual({ depth: 3, isNode: true });
    expect((await jsonTo(small, '/slow-tree', tree(4))).json()).toEqual({
      error: 'body.child.child.child: nested deeper than 3',
      status: 400,
    });
    const res = await jsonTo(inputs, '/slow-tree', tree(40_000));
    expect(res.status).toBe(400);
    expect(res.json<{ error: string }>().error).toMatch(/: nested deeper than 64$/);
  });

  it('JSON nested half a million arrays deep is 400', async () => {
    const res = await jsonTo(inputs, '/tree', '['.repeat(500_000) + ']'.repeat(500_000));
    expect(res.status).toBe(400);
    const open = await jsonTo(inputs, '/tree', '['.repeat(1_000_000));
    expect(open.status).toBe(400);
    expect(open.json()).toEqual({ error: 'body: invalid JSON', status: 400 });
  });
});

describe('maxParams and maxDepth settings', () => {
  it('a bound that is not a whole number of at least 1 is refused at build, naming it', () => {
    expect(() =>
      new App({ log: () => {}, maxParams: 0 }).controllers(InputController).build(),
    ).toThrow(/maxParams must be a whole number from 1, got 0/);
    expect(() =>
      new App({ log: () => {}, maxDepth: 1.5 }).controllers(InputController).build(),
    ).toThrow(/maxDepth must be a whole number from 1, got 1.5/);
  });
});
