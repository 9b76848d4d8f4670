import 'reflect-metadata';
import {
  IsEnum,
  IsInt,
  IsOptional,
  IsString,
  Min,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { Type } from 'class-transformer';
import {
  App,
  Body,
  Controller,
  Ctx,
  Form,
  Get,
  Json,
  jsonEnum,
  Optional,
  Post,
  Query,
  Reply,
  Returns,
  Status,
  Union,
  type RenameAll,
} from 'fw-http';
import { schemaOf } from '../../lib/http/schema';

const quiet = () => new App({ log: () => {} });

function refusals(...controllers: Function[]): string[] {
  try {
    quiet()
      .controllers(...controllers)
      .build();
  } catch (e) {
    return (e as { problems: string[] }).problems;
  }
  return [];
}

// ---- Types shared by the tests

@Json({ renameAll: 'kebab-case' })
class Order {
  @IsString() id!: string;
  @IsString() createdAt!: string;
  @IsInt() lineCount!: number;
}
const order = (id: string, createdAt: string, lineCount: number): Order =>
  Object.assign(new Order(), { id, createdAt, lineCount });

class Circle {
  @IsInt() @Min(1) r!: number;
  constructor(r = 0) {
    this.r = r;
  }
}
class Square {
  @IsInt() side!: number;
  constructor(side = 0) {
    this.side = side;
  }
}
const Shape = Union('Shape', { circle: Circle, square: Square, empty: null });
type Shape = InstanceType<typeof Shape>;
const Tagged = Union('Tagged', { circle: Circle, square: Square, empty: null }, { tag: 'kind' });
type Tagged = InstanceType<typeof Tagged>;

enum Color {
  DarkBlue = 1,
  LightGreen = 2,
}
jsonEnum(Color, { renameAll: 'kebab-case' });

class Drawing {
  @ValidateNested() @Type(() => Tagged) shape!: Tagged;
  @IsOptional() @ValidateNested() @Type(() => Shape) outline?: Shape;
  @IsOptional() @IsEnum(Color) color?: Color;
  @IsOptional() @IsEnum(Color, { each: true }) palette?: Color[];
}

describe('JSON spelling marker: writing', () => {
  it('JSON-01 JSON-07 JSON-12 @Json({ renameAll }) renames the fields of a class on every JSON answer, without further declaration', async () => {
    @Controller()
    class C {
      @Get('/order') @Returns(Order) one() {
        return order('7', '2024-05-01', 2);
      }
      @Get('/orders') @Returns(Status(201, [Order])) list() {
        return [order('1', 'a', 1), order('2', 'b', 2)];
      }
      @Get('/maybe') @Returns(Optional(Order)) maybe() {
        return order('3', 'c', 3);
      }
      @Get('/reply') @Returns(Reply(Order, { statuses: [202] })) reply() {
        return { status: 202 as const, value: order('4', 'd', 4) };
      }
      // A plain list: each element's runtime class decides its spelling.
      @Returns(Object)
      @Get('/inferred')
      inferred() {
        return [order('5', 'e', 5)];
      }
      @Get('/ctx') viaCtx(c: Ctx) {
        c.sendJson(200, order('6', 'f', 6));
      }
    }
    const app = quiet().controllers(C);
    expect((await app.inject({ url: '/order' })).body).toBe(
      '{"id":"7","created-at":"2024-05-01","line-count":2}',
    );
    const list = await app.inject({ url: '/orders' });
    expect([list.status, list.body]).toEqual([
      201,
      '[{"id":"1","created-at":"a","line-count":1},{"id":"2","created-at":"b","line-count":2}]',
    ]);
    expect((await app.inject({ url: '/maybe' })).body).toBe(
      '{"id":"3","created-at":"c","line-count":3}',
    );
    const reply = await app.inject({ url: '/reply' });
    expect([reply.status, reply.body]).toEqual([202, '{"id":"4","created-at":"d","line-count":4}']);
    expect((await app.inject({ url: '/inferred' })).body).toBe(
      '[{"id":"5","created-at":"e","line-count":5}]',
    );
    expect((await app.inject({ url: '/ctx' })).body).toBe(
      '{"id":"6","created-at":"f","line-count":6}',
    );
  });

  it('JSON-12 a marked class nested in an unmarked one is spelled, and a class reaching no marker is written as JSON.stringify writes it', async () => {
    class Page {
      @ValidateNested({ each: true }) @Type(() => Order) items: Order[] = [];
      @IsInt() total = 0;
    }
    class Plain {
      @IsString() createdAt = 'x';
      when = new Date(0);
    }
    @Controller()
    class C {
      @Get('/page') @Returns(Page) page() {
        const p = new Page();
        p.items = [order('1', 'a', 1)];
        p.total = 1;
        return p;
      }
      @Get('/plain') @Returns(Plain) plain() {
        return new Plain();
      }
    }
    const app = quiet().controllers(C);
    expect((await app.inject({ url: '/page' })).body).toBe(
      '{"items":[{"id":"1","created-at":"a","line-count":1}],"total":1}',
    );
    expect((await app.inject({ url: '/plain' })).body).toBe(JSON.stringify(new Plain()));
  });

  it('JSON-05 OPEN-56 renameAll takes each of the six spellings; words split at lower→upper changes and digits', async () => {
    const expected: Record<RenameAll, string> = {
      lowercase: '{"createdat":1,"line2total":2,"httpserver":3}',
      UPPERCASE: '{"CREATEDAT":1,"LINE2TOTAL":2,"HTTPSERVER":3}',
      camelCase: '{"createdAt":1,"line2Total":2,"httpServer":3}',
      PascalCase: '{"CreatedAt":1,"Line2Total":2,"HttpServer":3}',
      SCREAMING_SNAKE_CASE: '{"CREATED_AT":1,"LINE_2_TOTAL":2,"HTTP_SERVER":3}',
      'kebab-case': '{"created-at":1,"line-2-total":2,"http-server":3}',
    };
    for (const rule of Object.keys(expected) as RenameAll[]) {
      @Json({ renameAll: rule })
      class Spelled {
        createdAt = 1;
        line2Total = 2;
        HTTPServer = 3;
      }
      @Controller()
      class C {
        @Get('/x') @Returns(Spelled) x() {
          return new Spelled();
        }
      }
      expect([rule, (await quiet().controllers(C).inject({ url: '/x' })).body]).toEqual([
        rule,
        expected[rule],
      ]);
    }
  });

  it('JSON-10 JSON-11 rename sets one field and wins over renameAll; rename is allowed alone', async () => {
    @Json({ renameAll: 'SCREAMING_SNAKE_CASE', rename: { createdAt: 'created' } })
    class Both {
      createdAt = 'a';
      updatedAt = 'b';
    }
    @Json({ rename: { createdAt: 'created_at' } })
    class Alone {
      createdAt = 'a';
      updatedAt = 'b';
    }
    @Controller()
    class C {
      @Get('/both') @Returns(Both) both() {
        return new Both();
      }
      @Get('/alone') @Returns(Alone) alone() {
        return new Alone();
      }
    }
    const app = quiet().controllers(C);
    expect((await app.inject({ url: '/both' })).body).toBe('{"created":"a","UPDATED_AT":"b"}');
    expect((await app.inject({ url: '/alone' })).body).toBe('{"created_at":"a","updatedAt":"b"}');
  });

  it('JSON-02 OPEN-55 a union is externally tagged by default: one key naming the variant; a variant without payload is {"name":{}}', async () => {
    @Controller()
    class C {
      @Get('/shapes') @Returns([Shape]) shapes(): Shape[] {
        return [new Circle(1), new Square(2), Shape.empty];
      }
      @Get('/one') @Returns(Shape) one(): Shape {
        return new Circle(3);
      }
    }
    const app = quiet().controllers(C);
    expect((await app.inject({ url: '/shapes' })).body).toBe(
      '[{"circle":{"r":1}},{"square":{"side":2}},{"empty":{}}]',
    );
    expect((await app.inject({ url: '/one' })).body).toBe('{"circle":{"r":3}}');
  });

  it('JSON-03 JSON-04 with tag, the variant name sits under the tag beside its fields; a variant without payload is the tag alone', async () => {
    class Picture {
      @ValidateNested({ each: true }) @Type(() => Tagged) shapes: Tagged[] = [];
    }
    @Controller()
    class C {
      @Get('/picture') @Returns(Picture) picture() {
        const p = new Picture();
        p.shapes = [new Circle(1), new Square(2), Tagged.empty];
        return p;
      }
    }
    expect((await quiet().controllers(C).inject({ url: '/picture' })).body).toBe(
      '{"shapes":[{"kind":"circle","r":1},{"kind":"square","side":2},{"kind":"empty"}]}',
    );
  });

  it('JSON-09 renameAll on a union renames its variant names', async () => {
    class Placed {
      @IsString() orderId = '7';
    }
    const Event = Union(
      'Event',
      { orderPlaced: Placed, orderCancelled: null },
      { tag: 'type', renameAll: 'SCREAMING_SNAKE_CASE' },
    );
    const External = Union(
      'External',
      { orderPlaced: Placed, orderCancelled: null },
      { renameAll: 'kebab-case' },
    );
    @Controller()
    class C {
      @Get('/events') @Returns([Event]) events() {
        return [new Placed(), Event.orderCancelled];
      }
      @Get('/external') @Returns([External]) external() {
        return [new Placed(), External.orderCancelled];
      }
    }
    const app = quiet().controllers(C);
    expect((await app.inject({ url: '/events' })).body).toBe(
      '[{"type":"ORDER_PLACED","orderId":"7"},{"type":"ORDER_CANCELLED"}]',
    );
    expect((await app.inject({ url: '/external' })).body).toBe(
      '[{"order-placed":{"orderId":"7"}},{"order-cancelled":{}}]',
    );
  });

  it('JSON-08 renameAll on an enum (jsonEnum) writes its member names spelled, for one value and for a list', async () => {
    @Controller()
    class C {
      @Get('/drawing') @Returns(Drawing) drawing() {
        const d = new Drawing();
        d.shape = Tagged.empty;
        d.color = Color.LightGreen;
        d.palette = [Color.DarkBlue, Color.LightGreen];
        return d;
      }
    }
    expect((await quiet().controllers(C).inject({ url: '/drawing' })).body).toBe(
      '{"shape":{"kind":"empty"},"color":"light-green","palette":["dark-blue","light-green"]}',
    );
  });

  it('JSON-01 a class with @Json({ tag }) writes its own name under the tag', async () => {
    @Json({ tag: 'type' })
    class Receipt {
      @IsString() id = 'r1';
    }
    @Controller()
    class C {
      @Get('/receipt') @Returns(Receipt) receipt() {
        return new Receipt();
      }
    }
    expect((await quiet().controllers(C).inject({ url: '/receipt' })).body).toBe(
      '{"type":"Receipt","id":"r1"}',
    );
  });

  it('JSON-12 a value that is no variant of its declared union answers 500', async () => {
    @Controller()
    class C {
      @Get('/wrong') @Returns(Shape) wrong() {
        return { r: 1 };
      }
    }
    const res = await quiet().controllers(C).inject({ url: '/wrong' });
    expect(res.status).toBe(500);
  });
});

describe('JSON spelling marker: reading', () => {
  @Controller()
  class Draw {
    @Returns(Object)
    @Post('/draw')
    draw(@Body() d: Drawing) {
      const shape = d.shape;
      return {
        shape:
          shape instanceof Circle
            ? `circle ${shape.r}`
            : shape instanceof Square
              ? `square ${shape.side}`
              : shape === Tagged.empty
                ? 'empty'
                : 'other',
        outline:
          d.outline instanceof Circle
            ? `circle ${d.outline.r}`
            : d.outline === Shape.empty
              ? 'empty'
              : String(d.outline),
        color: d.color ?? null,
        palette: d.palette ?? null,
      };
    }
  }
  const app = quiet().controllers(Draw);
  const post = (body: object) => app.inject({ method: 'POST', url: '/draw', body });

  it('JSON-13 JSON-14 a tagged union in a request body is read into the right variant class, a payload-less variant into its constant', async () => {
    expect(
      (await post({ shape: { kind: 'circle', r: 2 }, outline: { circle: { r: 5 } } })).json(),
    ).toEqual({ shape: 'circle 2', outline: 'circle 5', color: null, palette: null });
    expect((await post({ shape: { kind: 'square', side: 3 } })).json()).toMatchObject({
      shape: 'square 3',
      outline: 'undefined',
    });
    expect((await post({ shape: { kind: 'empty' }, outline: { empty: {} } })).json()).toMatchObject(
      { shape: 'empty', outline: 'empty' },
    );
  });

  it('JSON-13 a union that names no variant, or whose variant fails its checks, is a 400 naming the field', async () => {
    const cases: [object, string][] = [
      [{ shape: { r: 2 } }, 'body.shape.kind: is required'],
      [
        { shape: { kind: 'triangle' } },
        'body.shape.kind: must be one of the following values: circle, square, empty',
      ],
      [{ shape: { kind: 'circle', r: 0 } }, 'body.shape.r: must not be less than 1'],
      [{ shape: 'circle' }, 'body.shape: must be an object'],
      [
        { shape: { kind: 'empty' }, outline: { circle: { r: 1 }, square: { side: 1 } } },
        'body.outline: must be an object with one key naming the variant (circle, square, empty)',
      ],
      [
        { shape: { kind: 'empty' }, outline: { circle: 1 } },
        'body.outline.circle: must be an object',
      ],
      [
        { shape: { kind: 'empty' }, outline: { circle: { r: 0 } } },
        'body.outline.circle.r: must not be less than 1',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect([res.status, res.json<{ error: string }>().error]).toEqual([400, message]);
    }
  });

  it('JSON-08 JSON-13 a marked enum is read from its spelled member names; its values or unknown names are refused', async () => {
    expect(
      (
        await post({
          shape: { kind: 'empty' },
          color: 'dark-blue',
          palette: ['light-green', 'dark-blue'],
        })
      ).json(),
    ).toMatchObject({ color: Color.DarkBlue, palette: [Color.LightGreen, Color.DarkBlue] });
    const numeric = await post({ shape: { kind: 'empty' }, color: 1 });
    expect([numeric.status, numeric.json<{ error: string }>().error]).toEqual([
      400,
      'body.color: must be one of the following values: dark-blue, light-green',
    ]);
    const listed = await post({ shape: { kind: 'empty' }, palette: ['dark-blue', 'DarkBlue'] });
    expect(listed.json<{ error: string }>().error).toBe(
      'body.palette[1]: must be one of the following values: dark-blue, light-green',
    );
  });

  it('JSON-08 JSON-13 a marked enum in a @Query() class is read from its spelled names too', async () => {
    class Search {
      @IsOptional() @IsEnum(Color) color?: Color;
    }
    @Controller()
    class C {
      @Returns(Object)
      @Get('/search')
      search(@Query() q: Search) {
        return { color: q.color ?? null };
      }
    }
    const searching = quiet().controllers(C);
    expect((await searching.inject({ url: '/search?color=light-green' })).json()).toEqual({
      color: Color.LightGreen,
    });
    const bad = await searching.inject({ url: '/search?color=2' });
    expect([bad.status, bad.json<{ error: string }>().error]).toEqual([
      400,
      'query.color: must be one of the following values: dark-blue, light-green',
    ]);
  });

  it('JSON-14 a tag on an input class is allowed: the body carries the class name under it', async () => {
    @Json({ tag: 'type' })
    class Signup {
      @IsString() name!: string;
    }
    @Controller()
    class C {
      @Returns(Object)
      @Post('/signup')
      signup(@Body() s: Signup) {
        return { name: s.name, isSignup: s instanceof Signup };
      }
    }
    const tagged = quiet().controllers(C);
    expect(
      (
        await tagged.inject({
          method: 'POST',
          url: '/signup',
          body: { type: 'Signup', name: 'Ada' },
        })
      ).json(),
    ).toEqual({ name: 'Ada', isSignup: true });
    const missing = await tagged.inject({ method: 'POST', url: '/signup', body: { name: 'Ada' } });
    expect([missing.status, missing.json<{ error: string }>().error]).toEqual([
      400,
      'body.type: is required',
    ]);
    const wrong = await tagged.inject({
      method: 'POST',
      url: '/signup',
      body: { type: 'Login', name: 'Ada' },
    });
    expect(wrong.json<{ error: string }>().error).toBe('body.type: must be "Signup"');
  });
});

describe('JSON spelling marker: Refusals', () => {
  @Json({ renameAll: 'camelCase' })
  class Renamed {
    @IsString() name!: string;
  }
  @Json({ rename: { street: 'str' } })
  class Address {
    @IsString() street!: string;
  }
  class Customer {
    @ValidateNested() @Type(() => Address) address!: Address;
  }
  @Json({ tag: 'type' })
  class TaggedInput {
    @IsOptional() @IsString() q?: string;
  }

  it('REF-06 renameAll or rename on a class used as @Body, or on a class it holds, is refused naming the route', () => {
    @Controller()
    class C {
      @Post('/a') a(@Body() _r: Renamed) {}
      @Post('/b') b(@Body() _c: Customer) {}
    }
    expect(refusals(C)).toEqual([
      'POST /a (C.a): parameter 0: @Body Renamed renames its fields with @Json renameAll/rename; an input type is read by its own field names',
      'POST /b (C.b): parameter 0: @Body Customer holds Address (at .address), which renames its fields with @Json renameAll/rename; an input type is read by its own field names',
    ]);
  });

  it('REF-07 renameAll or rename on a class used as @Form is refused naming the route', () => {
    @Controller()
    class C {
      @Post('/f') f(@Form() _r: Renamed) {}
    }
    expect(refusals(C)).toEqual([
      'POST /f (C.f): parameter 0: @Form Renamed renames its fields with @Json renameAll/rename; an input type is read by its own field names',
    ]);
  });

  it('REF-08 renameAll or rename on a class used as @Query() is refused naming the route', () => {
    @Controller()
    class C {
      @Get('/q') q(@Query() _r: Renamed) {}
    }
    expect(refusals(C)).toEqual([
      'GET /q (C.q): parameter 0: @Query() Renamed renames its fields with @Json renameAll/rename; an input type is read by its own field names',
    ]);
  });

  it('JSON-14 a tag (and a union or spelled enum inside) is allowed on @Body, @Query() and @Form types', () => {
    @Controller()
    class C {
      @Post('/b') b(@Body() _t: TaggedInput, @Query() _q: TaggedInput) {}
      @Post('/f') f(@Form() _t: TaggedInput) {}
      @Post('/d') d(@Body() _d: Drawing) {}
    }
    expect(refusals(C)).toEqual([]);
  });

  it('JSON-13 a union in a class read through class-validator (a custom constraint) is refused naming the route, not failed per request', () => {
    @ValidatorConstraint({ name: 'even' })
    class Even implements ValidatorConstraintInterface {
      validate(v: unknown) {
        return typeof v === 'number' && v % 2 === 0;
      }
    }
    class Custom {
      @Validate(Even) n!: number;
      @ValidateNested() @Type(() => Tagged) shape!: Tagged;
    }
    @Controller()
    class C {
      @Post('/c') c(@Body() _c: Custom) {}
    }
    expect(refusals(C)).toEqual([
      'POST /c (C.c): parameter 0: @Body Custom is read through class-validator (custom constraint even on n), which cannot read the union or spelled enum in shape',
    ]);
  });

  it('JSON-05 JSON-06 a renameAll outside the six (snake case included) is refused when declared', () => {
    expect(() => Json({ renameAll: 'snake_case' as RenameAll })).toThrow(
      /renameAll must be one of 'lowercase', 'UPPERCASE', 'camelCase', 'PascalCase', 'SCREAMING_SNAKE_CASE', 'kebab-case' \(there is no snake case\), got "snake_case"/,
    );
  });
});

describe('JSON spelling marker: API description', () => {
  it('OPEN-57 a marked class is described with its property names as spelled on the wire', () => {
    const m = new Map<string, object>();
    schemaOf(Order, m);
    expect(m.get('Order')).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string' },
        'created-at': { type: 'string' },
        'line-count': { type: 'integer' },
      },
      required: ['id', 'created-at', 'line-count'],
    });
  });

  it('OPEN-57 an externally tagged union is a oneOf of one-key objects', () => {
    const m = new Map<string, object>();
    expect(schemaOf(Shape, m)).toEqual({ $ref: '#/components/schemas/Shape' });
    expect(m.get('Shape')).toEqual({
      oneOf: [
        {
          type: 'object',
          properties: { circle: { $ref: '#/components/schemas/Circle' } },
          required: ['circle'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { square: { $ref: '#/components/schemas/Square' } },
          required: ['square'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { empty: { type: 'object', maxProperties: 0 } },
          required: ['empty'],
          additionalProperties: false,
        },
      ],
    });
  });

  it('OPEN-57 an internally tagged union is a oneOf with a discriminator on its tag; spelled enums list their names', () => {
    const m = new Map<string, object>();
    schemaOf(Drawing, m);
    expect(m.get('Tagged')).toEqual({
      oneOf: [
        { $ref: '#/components/schemas/Tagged.circle' },
        { $ref: '#/components/schemas/Tagged.square' },
        { $ref: '#/components/schemas/Tagged.empty' },
      ],
      discriminator: {
        propertyName: 'kind',
        mapping: {
          circle: '#/components/schemas/Tagged.circle',
          square: '#/components/schemas/Tagged.square',
          empty: '#/components/schemas/Tagged.empty',
        },
      },
    });
    const kind = (name: string) => ({
      type: 'object',
      properties: { kind: { type: 'string', const: name } },
      required: ['kind'],
    });
    expect(m.get('Tagged.circle')).toEqual({
      allOf: [{ $ref: '#/components/schemas/Circle' }, kind('circle')],
    });
    expect(m.get('Tagged.empty')).toEqual(kind('empty'));
    expect(m.get('Drawing')).toMatchObject({
      properties: {
        shape: { $ref: '#/components/schemas/Tagged' },
        color: { type: ['string', 'null'], enum: ['dark-blue', 'light-green', null] },
        palette: {
          type: ['array', 'null'],
          items: { type: 'string', enum: ['dark-blue', 'light-green'] },
        },
      },
    });
  });
});
