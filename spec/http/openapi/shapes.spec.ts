import { execFileSync } from 'node:child_process';
import { IsInt, IsNumber, IsOptional, IsString } from 'class-validator';
import { App, Controller, Get, Page, Returns, Union, type PageOf } from 'fw-http';

// shapes people return, documented without hand-written schemas: Page(Order) as the
// component PageOfOrder, a top-level discriminated union, nullable fields in 3.1 form.

class Order {
  @IsString() id!: string;
  @IsInt() qty!: number;
  @IsOptional() @IsString() note?: string | null;
}

class Circle {
  @IsNumber() radius = 0;
}
class Square {
  @IsNumber() side = 0;
}
const Shape = Union('Shape', { circle: Circle, square: Square }, { tag: 'kind' });
type Shape = InstanceType<typeof Shape>;

@Controller('/shop')
class ShopController {
  @Get('/orders')
  @Returns(Page(Order))
  orders(): PageOf<Order> {
    const row = { id: 'o1', qty: 2, note: null, secret: 'x' };
    return { items: [row, { id: 'o2', qty: 1 }], total: 2, next: null };
  }

  @Get('/shape')
  @Returns(Shape)
  shape(): Shape {
    return new Circle();
  }
}

type Schemas = Record<string, Record<string, unknown>>;

describe('shapes people actually return', () => {
  const app = new App({ log: () => {} }).controllers(ShopController);
  const doc = app.document() as unknown as {
    paths: Record<
      string,
      Record<
        string,
        { responses: Record<string, { content: Record<string, { schema: unknown }> }> }
      >
    >;
    components: { schemas: Schemas };
  };

  it('Page(Order) is the named component PageOfOrder, one class per item class', () => {
    expect(Page(Order)).toBe(Page(Order));
    expect(
      doc.paths['/shop/orders']!.get!.responses['200']!.content['application/json']!.schema,
    ).toEqual({
      $ref: '#/components/schemas/PageOfOrder',
    });
    expect(doc.components.schemas.PageOfOrder).toEqual({
      type: 'object',
      properties: {
        items: { type: 'array', items: { $ref: '#/components/schemas/Order' } },
        total: { type: 'integer', minimum: 0 },
        next: { type: ['string', 'null'] },
      },
      required: ['items', 'total'],
    });
    expect(doc.components.schemas.Order!.properties).toMatchObject({
      note: { type: ['string', 'null'] },
    });
  });

  it('a page is written by its declaration: items of Order only, null where optional', async () => {
    const r = await app.inject({ url: '/shop/orders' });
    expect(r.body).toBe(
      '{"items":[{"id":"o1","qty":2,"note":null},{"id":"o2","qty":1}],"total":2,"next":null}',
    );
  });

  it('a top-level union is a component with a discriminator; the document validates', () => {
    expect(doc.components.schemas.Shape).toMatchObject({
      oneOf: [
        { $ref: '#/components/schemas/Shape.circle' },
        { $ref: '#/components/schemas/Shape.square' },
      ],
      discriminator: { propertyName: 'kind' },
    });
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Validator } from '@seriousme/openapi-schema-validator';
         console.log(JSON.stringify(await new Validator().validate(JSON.parse(process.argv[1]))));`,
        JSON.stringify(doc),
      ],
      { cwd: process.cwd() },
    ).toString();
    expect(JSON.parse(out)).toEqual({ valid: true });
  });
});
