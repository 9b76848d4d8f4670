import * as v from 'valibot';
import { z } from 'zod';
import { App, Body, Controller, Post, Returns, Status, type Infer } from 'fw-http';

// any Standard Schema v1 value reads a body beside class-validator classes: 400 naming
// the first failing path, the handler typed from the schema, the document from the library's own
// JSON Schema conversion as a named component.

const NewOrder = z.object({
  sku: z.string().min(1).max(32),
  qty: z.number().int().min(1).max(100),
  lines: z.array(z.object({ note: z.string() })).optional(),
});

const Signup = v.object({ email: v.pipe(v.string(), v.email()) });

class Placed {
  constructor(
    readonly sku: string = '',
    readonly qty: number = 0,
  ) {}
}

@Controller('/z')
class SchemaController {
  @Post('/orders')
  @Returns(Status(201, Placed))
  create(@Body(NewOrder) o: Infer<typeof NewOrder>): Placed {
    // Typed from the schema: o.qty is a number, o.sku a string.
    const qty: number = o.qty;
    return new Placed(o.sku.toUpperCase(), qty);
  }

  @Post('/signup')
  @Returns(Status(201, Placed))
  signup(@Body(Signup) s: Infer<typeof Signup>): Placed {
    return new Placed(s.email, 1);
  }
}

const post = (app: App, url: string, body: unknown) =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('Standard Schema bodies', () => {
  const app = new App({ log: () => {} }).controllers(SchemaController);

  it('zod 4: a valid body reaches the handler as the schema parsed it', async () => {
    const r = await post(app, '/z/orders', { sku: 'abc', qty: 3 });
    expect([r.status, r.body]).toEqual([201, '{"sku":"ABC","qty":3}']);
  });

  it('zod 4 and valibot: 400 naming the first failing path, in the failure shape', async () => {
    const bad = await post(app, '/z/orders', {
      sku: 'abc',
      qty: 3,
      lines: [{ note: 'a' }, { note: 4 }],
    });
    expect(bad.status).toBe(400);
    expect(bad.json<{ error: string }>().error).toMatch(/^body\.lines\[1\]\.note: /);
    const qty = await post(app, '/z/orders', { sku: 'abc', qty: 0 });
    expect(qty.json<{ error: string; status: number }>()).toMatchObject({ status: 400 });
    expect(qty.json<{ error: string }>().error).toMatch(/^body\.qty: /);
    const mail = await post(app, '/z/signup', { email: 'not-mail' });
    expect(mail.status).toBe(400);
    expect(mail.json<{ error: string }>().error).toMatch(/^body\.email: /);
    expect((await post(app, '/z/signup', { email: 'a@b.co' })).status).toBe(201);
  });

  it("the document names the zod schema's JSON Schema as a component", () => {
    const doc = app.document() as unknown as {
      paths: Record<
        string,
        Record<string, { requestBody: { content: Record<string, { schema: unknown }> } }>
      >;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    expect(doc.paths['/z/orders']!.post!.requestBody.content['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/SchemaController.create.Body',
    });
    expect(doc.components.schemas['SchemaController.create.Body']).toMatchObject({
      type: 'object',
      properties: {
        sku: { type: 'string', minLength: 1, maxLength: 32 },
        qty: { type: 'integer', minimum: 1, maximum: 100 },
      },
      required: ['sku', 'qty'],
    });
    expect(doc.components.schemas['SchemaController.create.Body']!.$schema).toBeUndefined();
  });
});
