import type { App } from 'fw-http';
import { shop } from '../../sample/shop/shop';
import { warehouse } from '../../sample/warehouse/warehouse';

// SAMPLE.md's POST /mcp row, over real sockets with a plain JSON-RPC client.

let warehouseApp: App;
let warehouseUrl = '';
beforeAll(async () => {
  warehouseApp = warehouse({ log: () => {} });
  warehouseUrl = (await warehouseApp.listen({ port: 0 })).url;
});
afterAll(() => warehouseApp.close());

let n = 0;
const fresh = () => `mcp-${process.pid}-${Date.now()}-${n++}`;

describe('the sample shop: POST /mcp (SAMPLE.md contract)', () => {
  let app: App;
  let url = '';
  beforeAll(async () => {
    app = shop({ log: () => {}, warehouseUrl, openapiOut: null });
    url = (await app.listen({ port: 0 })).url;
  });
  afterAll(() => app.close());

  const post = async (body: unknown, authorization: string | null = 'Bearer alice-token') => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(authorization === null ? {} : { authorization }),
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON-RPC answers read field by field
    return { res, text, json: () => JSON.parse(text) as Record<string, any> };
  };
  const placeOrder = (id: number, args: object, key?: string, auth?: string) =>
    post(
      {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'place_order',
          arguments: args,
          ...(key === undefined ? {} : { _meta: { idempotencyKey: key } }),
        },
      },
      auth,
    );
  const ordersOf = async (authorization = 'Bearer alice-token') =>
    (await (await fetch(`${url}/orders`, { headers: { authorization } })).json()) as {
      sku: string;
    }[];

  it('initialize (2025-06-18), notifications 202, tools/list with place_order over NewOrder', async () => {
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'spec', version: '1.0.0' },
      },
    });
    expect(init.res.status).toBe(200);
    expect(init.res.headers.get('content-type')).toBe('application/json');
    expect(init.json().result).toMatchObject({
      protocolVersion: '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'fw sample shop' },
    });
    const note = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.res.status).toBe(202);
    expect(note.text).toBe('');
    const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const tool = (list.json().result.tools as { name: string }[]).find(
      (t) => t.name === 'place_order',
    );
    expect(tool).toMatchObject({
      inputSchema: {
        type: 'object',
        properties: { sku: { type: 'string' }, qty: { type: 'integer' } },
        required: ['sku', 'qty'],
      },
      outputSchema: { type: 'object' },
    });
    expect(
      Object.keys(
        (tool as unknown as { inputSchema: { properties: object } }).inputSchema.properties,
      ),
    ).toEqual(['sku', 'qty']);
  });

  it('GET /mcp is 405; no bearer is 401', async () => {
    expect((await fetch(`${url}/mcp`)).status).toBe(405);
    const none = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, null);
    expect(none.res.status).toBe(401);
    expect(none.res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('tools/call twice with one key places one order: the order as structuredContent and as JSON text', async () => {
    const sku = fresh();
    const key = fresh();
    const first = (await placeOrder(1, { sku, qty: 2 }, key)).json().result;
    expect(first.structuredContent).toMatchObject({
      sku,
      qty: 2,
      account: 'alice',
      status: 'placed',
    });
    expect(first.content).toEqual([
      { type: 'text', text: JSON.stringify(first.structuredContent) },
    ]);
    const again = (await placeOrder(2, { qty: 2, sku }, key)).json().result;
    expect(again).toEqual(first);
    expect((await ordersOf()).filter((o) => o.sku === sku)).toHaveLength(1);
  });

  it('the same key over HTTP and then over MCP places one order', async () => {
    const sku = fresh();
    const key = fresh();
    const http = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer alice-token',
        'idempotency-key': key,
      },
      body: JSON.stringify({ sku, qty: 1 }),
    });
    expect(http.status).toBe(201);
    const mcp = (await placeOrder(1, { sku, qty: 1 }, key)).json().result;
    expect(mcp.structuredContent).toEqual(await http.json());
    expect((await ordersOf()).filter((o) => o.sku === sku)).toHaveLength(1);
  });

  it('no _meta.idempotencyKey is JSON-RPC error -32602 naming it; nothing is placed', async () => {
    const sku = fresh();
    const res = await placeOrder(1, { sku, qty: 1 });
    expect(res.res.status).toBe(200);
    expect(res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: expect.stringContaining('idempotencyKey') },
    });
    expect((await ordersOf()).filter((o) => o.sku === sku)).toHaveLength(0);
  });

  it("a failure is a result with isError and the route's failure body in content", async () => {
    const sold = (await placeOrder(1, { sku: 'sold-out', qty: 1 }, fresh())).json().result;
    expect(sold.isError).toBe(true);
    expect(sold).not.toHaveProperty('structuredContent');
    const body = JSON.parse(sold.content[0].text) as { error: string; status: number };
    expect(Object.keys(body)).toEqual(['error', 'status']);
    expect(body.status).toBe(409);
  });

  it('a JWT of the development issuer is a caller too', async () => {
    const minted = await fetch(`${url}/dev/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: 'bob', scopes: [] }),
    });
    const { token } = (await minted.json()) as { token: string };
    const sku = fresh();
    const placed = (await placeOrder(1, { sku, qty: 1 }, fresh(), `Bearer ${token}`)).json().result;
    expect(placed.structuredContent).toMatchObject({ sku, account: 'bob' });
  });
});
