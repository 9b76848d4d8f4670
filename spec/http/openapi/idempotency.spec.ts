import { IsInt, IsString } from 'class-validator';
import {
  App,
  Body,
  Controller,
  Ctx,
  Get,
  Idempotent,
  Param,
  Post,
  Put,
  Reply,
  Returns,
  Status,
  reply,
} from 'fw-http';
import { type OpenApiDocument } from 'fw-http/openapi';
import { MemoryStore, Space } from 'fw-http/cache';

class NewOrder {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}
class Order {
  @IsString() id!: string;
}
class Taken {
  @IsString() reason!: string;
}

const Orders = Space('openapi-orders', { ttlSeconds: 60, maxBytes: 4096 });

@Controller()
class OrdersController {
  @Post('/orders')
  @Idempotent(Orders, { by: (c: Ctx) => c.header('x-account') })
  @Returns(Reply({ 201: Order, 409: Taken }))
  create(@Body() order: NewOrder) {
    return reply(201, { id: order.sku });
  }

  @Put('/orders/{id}')
  @Idempotent(Orders)
  @Returns(Status(202, Order))
  replace(@Param('id') _id: string, @Body() _order: NewOrder): Order {
    return new Order();
  }

  @Get('/orders')
  @Returns([Order])
  list(): Order[] {
    return [];
  }
}

type Responses = Record<
  string,
  {
    description: string;
    headers?: Record<string, { required?: boolean; schema: Record<string, unknown> }>;
    content?: Record<string, { schema: unknown }>;
  }
>;
type Parameter = { name: string; in: string; required: boolean; schema: Record<string, unknown> };

describe('OpenAPI of idempotent routes', () => {
  let doc: OpenApiDocument;
  beforeAll(() => {
    doc = new App()
      .provide(Orders.open(new MemoryStore({ bytes: 1 << 20 })))
      .controllers(OrdersController)
      .document();
  });
  const op = (path: string, method: string) =>
    doc.paths[path][method] as { parameters?: Parameter[]; responses: Responses };
  const FAILURE = { 'application/json': { schema: { $ref: '#/components/schemas/Failure' } } };

  it('OAS-11 an idempotent route lists Idempotency-Key as a required header parameter (text, 1..255)', () => {
    for (const [path, method] of [
      ['/orders', 'post'],
      ['/orders/{id}', 'put'],
    ]) {
      const key = op(path, method).parameters!.find((p) => p.name === 'Idempotency-Key');
      expect(key).toMatchObject({
        in: 'header',
        required: true,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
    }
    expect(op('/orders', 'get')).not.toHaveProperty('parameters');
  });

  it('OAS-12 an idempotent route lists its extra answers 400, 409 (with Retry-After) and 422', () => {
    const put = op('/orders/{id}', 'put').responses;
    for (const s of ['400', '409', '422']) expect(put[s].content).toEqual(FAILURE);
    expect(put['400'].description).toMatch(/Idempotency-Key/);
    expect(put['422'].description).toMatch(/different request/);
    expect(put['409'].headers!['Retry-After'].schema).toEqual({ type: 'integer' });
    expect(op('/orders', 'get').responses).not.toHaveProperty('409');
    expect(op('/orders', 'get').responses).not.toHaveProperty('422');
  });

  it('OAS-13 an idempotent route with by lists the extra answer 403', () => {
    expect(op('/orders', 'post').responses['403'].content).toEqual(FAILURE);
  });

  it('OPEN-14 an idempotent route without by lists no 403', () => {
    expect(op('/orders/{id}', 'put').responses).not.toHaveProperty('403');
  });

  it('OPEN-15 Idempotent-Replayed is an optional header of every answer the route keeps, not of its failures', () => {
    const post = op('/orders', 'post').responses;
    for (const s of ['201', '409'])
      expect(post[s].headers!['Idempotent-Replayed']).toMatchObject({
        required: false,
        schema: { type: 'string', enum: ['true'] },
      });
    expect(
      op('/orders/{id}', 'put').responses['202'].headers!['Idempotent-Replayed'],
    ).toBeDefined();
    for (const s of ['400', '403', '422'])
      expect(post[s].headers ?? {}).not.toHaveProperty('Idempotent-Replayed');
    expect(op('/orders', 'get').responses['200']).not.toHaveProperty('headers');
  });

  it('OAS-12 a route answer sharing the 409 keeps its own body beside the in-flight Failure', () => {
    const conflict = op('/orders', 'post').responses['409'];
    expect(conflict.content!['application/json'].schema).toEqual({
      oneOf: [{ $ref: '#/components/schemas/Taken' }, { $ref: '#/components/schemas/Failure' }],
    });
    expect(conflict.headers).toHaveProperty('Retry-After');
  });
});
