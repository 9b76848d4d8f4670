import { IsBoolean, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import {
  App,
  Body,
  Controller,
  Ctx,
  EventStream,
  Form,
  Get,
  Idempotent,
  Param,
  Post,
  Query,
  RefusalError,
  Reply,
  Requires,
  Returns,
  Status,
  fail,
  reply,
} from 'fw-http';
import { MCP_VERSIONS, Tool } from 'fw-http/mcp';
import { MemoryStore, Space } from 'fw-http/cache';

// MCP's Streamable HTTP transport over real sockets, driven by a plain JSON-RPC client (fetch).

/** The caller, from `Authorization: Bearer <name>[:admin]`; the scopes it holds are after the colon. */
class Caller {
  static authorization = 'bearer' as const;
  constructor(
    readonly id: string,
    readonly scopes: readonly string[],
  ) {}
  static resolve(c: Ctx): Caller {
    const [id, ...scopes] = c.authorization('bearer').value.split(':');
    if (id === undefined || id === '' || id === 'nobody')
      throw fail.challenge('bearer', 'unknown bearer token');
    return new Caller(id, scopes);
  }
  static scopesOf(_c: Ctx, v: unknown): readonly string[] {
    return (v as Caller).scopes;
  }
}

class NewOrder {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
}

class Order {
  @IsString() id!: string;
  @IsString() sku!: string;
  @IsInt() qty!: number;
  @IsString() account!: string;
}

class Taken {
  @IsString() reason!: string;
}

class ItemQuery {
  @IsOptional() @IsBoolean() verbose?: boolean;
}

class Item {
  @IsString() id!: string;
  @IsBoolean() verbose!: boolean;
  @IsString() ip!: string;
}

const Orders = Space('mcp-orders', { ttlSeconds: 60, maxBytes: 4096 });
let placed = 0;

@Controller('/orders')
class OrdersController {
  @Post()
  @Tool({ name: 'place_order', description: 'Places an order' })
  @Idempotent(Orders, { by: (c) => c.resolve(Caller).id })
  @Returns(Reply({ 201: Order }))
  create(@Body() o: NewOrder, caller: Caller) {
    placed++;
    const order = Object.assign(new Order(), { id: `o${placed}`, sku: o.sku, qty: o.qty });
    order.account = caller.id;
    return reply(201, order, { Location: `/orders/${order.id}` });
  }

  @Get()
  @Tool()
  @Returns([Order])
  list(caller: Caller): Order[] {
    return [Object.assign(new Order(), { id: 'o0', sku: 'a', qty: 1, account: caller.id })];
  }

  @Post('/{id}/cancel')
  @Tool({ name: 'cancel_order' })
  @Returns(Reply({ 200: Order, 409: Taken }))
  cancel(@Param('id') id: string, caller: Caller) {
    if (id === 'gone') return reply(409, Object.assign(new Taken(), { reason: 'cancelled' }));
    return reply(200, Object.assign(new Order(), { id, sku: 'a', qty: 1, account: caller.id }));
  }
}

@Controller('/items')
class ItemsController {
  @Get('/{id}')
  @Tool({ name: 'item' })
  @Returns(Item)
  one(@Param('id') id: string, @Query() q: ItemQuery, c: Ctx, _caller: Caller): Item {
    if (id === 'missing') throw fail.notFound('no item %s', id);
    return Object.assign(new Item(), { id, verbose: q.verbose ?? false, ip: c.ip });
  }

  @Requires(Caller, 'admin')
  @Get('/admin/stats')
  @Tool({ name: 'admin_stats' })
  @Returns(Status(200, Taken))
  stats(): Taken {
    return Object.assign(new Taken(), { reason: 'all fine' });
  }
}

interface Rpc {
  status: number;
  headers: Headers;
  text: string;
  json: () => {
    id?: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

function client(url: string, token = 'alice') {
  return async (message: unknown, headers: Record<string, string | null> = {}): Promise<Rpc> => {
    const h: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    };
    for (const [k, v] of Object.entries(headers)) {
      if (v === null) delete h[k];
      else h[k] = v;
    }
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: h,
      body: typeof message === 'string' ? message : JSON.stringify(message),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
  };
}

const call = (id: number, name: string, args: unknown, key?: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: {
    name,
    arguments: args,
    ...(key === undefined ? {} : { _meta: { idempotencyKey: key } }),
  },
});

describe('app.mcp(): MCP over Streamable HTTP', () => {
  const app = new App({
    title: 'mcp test',
    version: '2.0.0',
    log: () => {},
    trustProxy: 'loopback',
  })
    .controllers(OrdersController, ItemsController)
    .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })))
    .mcp({ guard: Caller, origins: ['https://agent.example'] });
  let url = '';
  let rpc: ReturnType<typeof client>;
  beforeAll(async () => {
    url = (await app.listen({ port: 0 })).url;
    rpc = client(url);
  });
  afterAll(() => app.close());

  it('initialize answers the version the client asked for when served, else the latest; then the server and its tools capability', async () => {
    for (const asked of ['2025-06-18', '2025-11-25', '2024-11-05']) {
      const res = await rpc({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: asked,
          capabilities: {},
          clientInfo: { name: 't', version: '1' },
        },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.json()).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: asked === '2024-11-05' ? MCP_VERSIONS[0] : asked,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: 'mcp test', version: '2.0.0' },
        },
      });
    }
    expect(MCP_VERSIONS).toEqual(['2025-11-25', '2025-06-18']);
  });

  it('a notification or a response is 202 with no body; ping is an empty result', async () => {
    const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
    expect(note.text).toBe('');
    expect((await rpc({ jsonrpc: '2.0', id: 9, result: {} })).status).toBe(202);
    expect((await rpc({ jsonrpc: '2.0', id: 'p', method: 'ping' })).json()).toEqual({
      jsonrpc: '2.0',
      id: 'p',
      result: {},
    });
  });

  it('GET and DELETE are 405 with Allow: POST (no stream is offered, no session kept)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${url}/mcp`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32000);
    }
  });

  it('protocol errors are JSON-RPC error objects: not JSON (-32700), a batch or no message (-32600, 400), an unknown method (-32601, 200)', async () => {
    const parse = await rpc('{"jsonrpc":');
    expect(parse.status).toBe(400);
    expect(parse.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const batch = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(batch.status).toBe(400);
    expect(batch.json().error?.code).toBe(-32600);
    expect((await rpc({ id: 1, method: 'ping' })).json().error?.code).toBe(-32600);
    const unknown = await rpc({ jsonrpc: '2.0', id: 2, method: 'resources/list' });
    expect(unknown.status).toBe(200);
    expect(unknown.json()).toMatchObject({ id: 2, error: { code: -32601 } });
  });

  it('checks Origin: the configured ones pass, another is 403, none (not a browser) passes', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect((await rpc(ping, { origin: 'https://agent.example' })).status).toBe(200);
    const evil = await rpc(ping, { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.json().error?.code).toBe(-32000);
    expect((await rpc(ping, { origin: null })).status).toBe(200);
  });

  it('refuses another media type (415), an Accept without JSON (406), an unsupported MCP-Protocol-Version (400)', async () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    expect((await rpc(ping, { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await rpc(ping, { accept: 'text/event-stream' })).status).toBe(406);
    expect((await rpc(ping, { accept: 'application/json;q=0, text/event-stream' })).status).toBe(
      406,
    );
    expect((await rpc(ping, { accept: null })).status).toBe(200);
    expect((await rpc(ping, { 'mcp-protocol-version': '1900-01-01' })).status).toBe(400);
    expect((await rpc(ping, { 'mcp-protocol-version': '2025-06-18' })).status).toBe(200);
  });

  it('the guard resolves every request: no bearer is its 401 with WWW-Authenticate', async () => {
    const res = await rpc({ jsonrpc: '2.0', id: 1, method: 'ping' }, { authorization: null });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('tools/list: one flat inputSchema of path, query and body fields; an outputSchema for one object only', async () => {
    const { tools } = (await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json()
      .result as { tools: Record<string, unknown>[] };
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual([
      'cancel_order',
      'item',
      'orders_list',
      'place_order',
    ]);
    expect(byName.place_order).toMatchObject({
      description: expect.stringMatching(/^Places an order\. Idempotent: .*_meta\.idempotencyKey/),
      inputSchema: {
        type: 'object',
        properties: {
          sku: { type: 'string', minLength: 1, maxLength: 32 },
          qty: { type: 'integer', minimum: 1, maximum: 100 },
        },
        required: ['sku', 'qty'],
      },
      outputSchema: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id', 'sku', 'qty', 'account'],
      },
      annotations: { idempotentHint: true },
      _meta: { idempotencyKey: 'required' },
    });
    expect(byName.item).toMatchObject({
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string' }, verbose: { type: 'boolean' } },
        required: ['id'],
      },
      annotations: { readOnlyHint: true, idempotentHint: true },
    });
    // An array, and a Reply of two statuses: no outputSchema.
    expect(byName.orders_list).not.toHaveProperty('outputSchema');
    expect(byName.cancel_order).not.toHaveProperty('outputSchema');
    expect(JSON.stringify(tools)).not.toContain('#/components/');
  });

  it('a tool whose route needs a scope the caller lacks is not listed, and calling it is an unknown tool', async () => {
    const admin = client(url, 'root:admin');
    const names = async (r: ReturnType<typeof client>) =>
      (
        (await r({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).json().result!.tools as {
          name: string;
        }[]
      ).map((t) => t.name);
    expect(await names(admin)).toContain('admin_stats');
    expect(await names(rpc)).not.toContain('admin_stats');
    expect((await rpc(call(1, 'admin_stats', {}))).json().error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('unknown tool admin_stats'),
    });
    expect((await admin(call(2, 'admin_stats', {}))).json().result).toMatchObject({
      structuredContent: { reason: 'all fine' },
    });
  });

  it('tools/call: the answer as structuredContent and as JSON text; path and query arguments; the caller’s address carried', async () => {
    const res = await rpc(call(1, 'item', { id: 'a b', verbose: true }), {
      'x-forwarded-for': '203.0.113.9',
    });
    const result = res.json().result!;
    expect(result.structuredContent).toEqual({ id: 'a b', verbose: true, ip: '203.0.113.9' });
    expect(result.content).toEqual([
      { type: 'text', text: JSON.stringify(result.structuredContent) },
    ]);
    expect(result).not.toHaveProperty('isError');
  });

  it("a failure is a result with isError and the route's failure body as text, not structuredContent", async () => {
    const missing = (await rpc(call(1, 'item', { id: 'missing' }))).json().result!;
    expect(missing).toEqual({
      content: [{ type: 'text', text: '{"error":"no item missing","status":404}' }],
      isError: true,
    });
    const refused = (await rpc(call(2, 'place_order', { sku: 'a', qty: 500 }, 'k-refused'))).json()
      .result!;
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content as { text: string }[])[0]!.text)).toEqual({
      error: 'body.qty: must not be greater than 100',
      status: 400,
    });
    // A Reply's declared 409 is the route's own answer, still not a success: isError.
    const taken = (await rpc(call(3, 'cancel_order', { id: 'gone' }))).json().result!;
    expect(taken).toMatchObject({ isError: true, content: [{ text: '{"reason":"cancelled"}' }] });
  });

  it('an @Idempotent tool without params._meta.idempotencyKey is JSON-RPC error -32602 naming it; the route does not run', async () => {
    const before = placed;
    const res = await rpc(call(1, 'place_order', { sku: 'a', qty: 1 }));
    expect(res.status).toBe(200);
    expect(res.json().error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('params._meta.idempotencyKey'),
    });
    expect(placed).toBe(before);
  });

  it('one key: calling twice (arguments reordered) places one order and gives the first result again', async () => {
    const before = placed;
    const first = (await rpc(call(1, 'place_order', { sku: 'pear', qty: 2 }, 'k-once'))).json()
      .result!;
    const again = (await rpc(call(2, 'place_order', { qty: 2, sku: 'pear' }, 'k-once'))).json()
      .result!;
    expect(placed).toBe(before + 1);
    expect(again).toEqual(first);
    expect(first.structuredContent).toMatchObject({ sku: 'pear', qty: 2, account: 'alice' });
    // Other arguments under that key are another request: the route's 422, as over HTTP.
    const other = (await rpc(call(3, 'place_order', { sku: 'pear', qty: 3 }, 'k-once'))).json()
      .result!;
    expect(other.isError).toBe(true);
    expect((other.content as { text: string }[])[0]!.text).toContain('"status":422');
  });

  it('a key used over HTTP and then over MCP by one caller is one key: one order', async () => {
    const before = placed;
    const http = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer alice',
        'idempotency-key': 'k-both',
      },
      body: '{"sku":"fig","qty":1}',
    });
    expect(http.status).toBe(201);
    const order = await http.json();
    const mcp = (await rpc(call(1, 'place_order', { qty: 1, sku: 'fig' }, 'k-both'))).json()
      .result!;
    expect(mcp.structuredContent).toEqual(order);
    expect(placed).toBe(before + 1);
    // Another caller's same key is its own.
    const bob = (
      await client(url, 'bob')(call(2, 'place_order', { qty: 1, sku: 'fig' }, 'k-both'))
    ).json().result!;
    expect((bob.structuredContent as { account: string }).account).toBe('bob');
    expect(placed).toBe(before + 2);
  });

  it('unknown tools and arguments that are no object are -32602', async () => {
    expect((await rpc(call(1, 'nope', {}))).json().error?.code).toBe(-32602);
    expect((await rpc(call(2, 'item', [1]))).json().error?.code).toBe(-32602);
    expect((await rpc(call(3, 'item', {}))).json().error?.message).toContain('"id"');
  });

  it('the endpoint is not in the OpenAPI document', () => {
    expect(app.document().paths).not.toHaveProperty('/mcp');
  });
});

describe('app.mcp() limits', () => {
  it("a message is read up to the app's maxBodyBytes; one byte more is 413", async () => {
    const app = new App({ log: () => {}, maxBodyBytes: 64 }).controllers(ItemsController).mcp();
    const { url } = await app.listen({ port: 0 });
    try {
      const at = (n: number) => {
        const base = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""}}';
        return base.replace('"x":""', `"x":"${'a'.repeat(n - base.length)}"`);
      };
      const send = client(url);
      expect(at(64)).toHaveLength(64);
      expect((await send(at(64))).status).toBe(200);
      expect((await send(at(65))).status).toBe(413);
    } finally {
      await app.close();
    }
  });
});

describe('@Tool refusals', () => {
  class Loose {
    sku!: string;
  }
  class Signup {
    @IsString() name!: string;
  }
  class Clash {
    @IsString() id!: string;
  }

  it('refuses a @Form route, a body without a runtime schema, two tools of one name, a bad name, an event stream', () => {
    @Controller()
    class Bad {
      @Post('/form') @Tool() form(@Form() s: Signup): void {
        void s;
      }
      @Post('/loose') @Tool({ name: 'loose' }) loose(@Body() b: Loose): void {
        void b;
      }
      @Post('/one') @Tool({ name: 'twice' }) one(): void {}
      @Post('/two') @Tool({ name: 'twice' }) two(): void {}
      @Post('/spaced') @Tool({ name: 'has space' }) spaced(): void {}
      @Get('/events') @Tool({ name: 'events' }) @Returns(EventStream.of(Signup)) *events() {
        yield Object.assign(new Signup(), { name: 'x' });
      }
    }
    let err: RefusalError | null = null;
    try {
      new App({ log: () => {} }).controllers(Bad).mcp().build();
    } catch (e) {
      err = e as RefusalError;
    }
    expect(err).toBeInstanceOf(RefusalError);
    expect(err!.problems).toEqual(
      expect.arrayContaining([
        `POST /form (Bad.form): @Tool("bad_form"): a tool's arguments are JSON; a @Form route cannot be a tool`,
        'POST /loose (Bad.loose): @Tool("loose"): its body has no runtime schema (a class with class-validator decorators, or a Standard Schema): a tool\'s inputSchema is made from it',
        'POST /two (Bad.two): @Tool("twice"): POST /one (Bad.one) is a tool of that name already',
        'POST /spaced (Bad.spaced): @Tool("has space"): a tool name is 1 to 128 of A-Z a-z 0-9 _ . - (MCP\'s tool names)',
        'GET /events (Bad.events): @Tool("events"): an event stream is no tool result',
      ]),
    );
  });

  it('refuses an argument that is both a parameter and a body field', () => {
    @Controller()
    class Both {
      @Post('/things/{id}') @Tool({ name: 'both' }) put(@Param('id') id: string, @Body() b: Clash) {
        void [id, b];
      }
    }
    expect(() => new App({ log: () => {} }).controllers(Both).mcp().build()).toThrow(
      'POST /things/{id} (Both.put): @Tool("both"): argument "id" is both a parameter and a body field',
    );
  });

  it('@Tool routes are plain routes without app.mcp()', () => {
    expect(() => new App({ log: () => {} }).controllers(ItemsController).build()).not.toThrow();
  });
});
