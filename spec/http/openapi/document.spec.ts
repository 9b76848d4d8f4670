import {
  IsEmail,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { Type } from 'class-transformer';
import {
  App,
  Authorization,
  Body,
  Bound,
  Bytes,
  Controller,
  Ctx,
  Delete,
  Form,
  Get,
  Header,
  NoContent,
  Optional,
  Param,
  Post,
  Put,
  Query,
  RateLimit,
  Redirect,
  Reply,
  Returns,
  Status,
  reply,
  type BearerCredentials,
  type BasicCredentials,
} from 'fw-http';
import { type OpenApiDocument } from 'fw-http/openapi';

// ---- shapes

class NewItem {
  @IsString() @Length(1, 32) sku!: string;
  @IsInt() @Min(1) @Max(100) qty!: number;
  @IsOptional() @IsString() note?: string;
}

class Item {
  @IsString() sku!: string;
  @IsInt() qty!: number;
}

class Search {
  @IsString() @Matches(/^[a-z]+$/) term!: string;
  @IsOptional() @IsInt() @Min(1) limit?: number;
}

class Problem {
  @IsString() reason!: string;
}

class Csv {
  static contentType = 'text/csv';
  static openapi = { type: 'string' };
  write(out: { write(s: string): void }) {
    out.write('a,b\n');
  }
}

class Plain {
  static contentType = 'application/x-plain';
  write(out: { write(s: string): void }) {
    out.write('x');
  }
}

class Caller {
  constructor(readonly id: string) {}
  static resolve(c: Ctx): Caller {
    return new Caller(c.authorization('bearer').value);
  }
}

@Controller('/items')
class ItemsController {
  @Get('/{id}', { summary: 'One item' })
  @Returns(Optional(Item))
  one(@Param('id') id: number): Item | null {
    return id === 1 ? Object.assign(new Item(), { sku: 'a', qty: 1 }) : null;
  }

  @Get()
  @Returns([Item])
  list(@Query() search: Search, @Header('x-trace') trace: string | null): Item[] {
    void search;
    void trace;
    return [];
  }

  @Post('', { operationId: 'createItem' })
  @Returns(Status(201, Item))
  create(@Body() item: NewItem, @Authorization('bearer') _auth: BearerCredentials): Item {
    return Object.assign(new Item(), item);
  }

  @Put('/{id}')
  @Returns(Reply({ 200: Item, 409: Problem }))
  replace(
    @Param('id') id: string,
    @Body() item: NewItem,
    @Authorization('basic') _auth: BasicCredentials,
  ) {
    return reply(200, { ...item, id });
  }

  @Delete('/{id}')
  remove(@Param('id') _id: string): void {}

  @Get('/{id}/name')
  @Returns(String)
  name(@Param('id') id: string, @Query('upper') upper: boolean): string {
    return upper ? id.toUpperCase() : id;
  }

  @Get('/kinds/csv')
  @Returns(Csv)
  csv(): Csv {
    return new Csv();
  }

  @Get('/kinds/plain')
  @Returns(Plain)
  plain(): Plain {
    return new Plain();
  }

  @Get('/kinds/raw')
  @Returns(Bytes)
  raw(): Bytes {
    return new Bytes('x');
  }

  @Get('/kinds/text')
  @Returns(String)
  text(): string {
    return 'x';
  }

  @Get('/{id}/mine')
  @Returns(Item)
  mine(@Param('id') _id: string, _caller: Caller): Item {
    return new Item();
  }

  @Get('/kinds/stream')
  stream(c: Ctx): void {
    c.sendText(200, 'x');
  }
}

@Controller()
class MovesController {
  @Get('/old')
  @Returns(Redirect(301))
  old() {
    return Redirect.to('/items');
  }

  @Post('/form')
  @Returns(Redirect(303))
  form() {
    return Redirect.to('/items');
  }

  @Get('/answer')
  @Returns(NoContent)
  async answer(): Promise<void> {}
}

type Operation = {
  operationId: string;
  tags: string[];
  summary?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    {
      description: string;
      headers?: Record<string, { required?: boolean; schema: unknown }>;
      content?: Record<string, { schema: Record<string, unknown> }>;
    }
  >;
};

const docOf = (app: App): OpenApiDocument => app.document();
const op = (doc: OpenApiDocument, path: string, method: string): Operation => {
  const o = doc.paths[path]?.[method];
  if (!o) throw new Error(`no ${method} ${path} in the document`);
  return o as unknown as Operation;
};
const FAILURE = { $ref: '#/components/schemas/Failure' };
const schemas = (doc: OpenApiDocument) =>
  doc.components.schemas as Record<string, Record<string, unknown>>;

describe('the OpenAPI document', () => {
  const doc = docOf(
    new App({ title: 'items', version: '2.1.0' }).controllers(ItemsController, MovesController),
  );

  it('OAS-01 is OpenAPI 3.2.0 with info from the app options (defaults fw app / 0.0.0)', () => {
    expect(doc.openapi).toBe('3.2.0');
    expect(doc.info).toEqual({ title: 'items', version: '2.1.0' });
    const bare = new App().controllers(MovesController).document();
    expect(bare.info).toEqual({ title: 'fw app', version: '0.0.0' });
  });

  it('OAS-05 lists every registered route under its path and method, and nothing else', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
    );
    const app = new App().controllers(ItemsController, MovesController).build();
    expect(listed.sort()).toEqual(app.routes.map((r) => `${r.method} ${r.path}`).sort());
    expect(listed).toContain('DELETE /items/{id}');
    expect(listed).toContain('POST /form');
  });

  it('OPEN-01 operationId is Controller.method unless named, tags by controller, summary when given', () => {
    expect(op(doc, '/items', 'get')).toMatchObject({
      operationId: 'ItemsController.list',
      tags: ['Items'],
    });
    expect(op(doc, '/items', 'post').operationId).toBe('createItem');
    expect(op(doc, '/items/{id}', 'get').summary).toBe('One item');
    expect(op(doc, '/items', 'get')).not.toHaveProperty('summary');
    expect(doc.tags).toEqual([{ name: 'Items' }, { name: 'Moves' }]);
  });

  it('OAS-06 lists the success status of the contract: 200 for T, code for Status(code, T), the redirect status', () => {
    expect(Object.keys(op(doc, '/items', 'get').responses)).toContain('200');
    expect(Object.keys(op(doc, '/items', 'post').responses)).toEqual(
      expect.arrayContaining(['201']),
    );
    expect(op(doc, '/items', 'post').responses).not.toHaveProperty('200');
    expect(Object.keys(op(doc, '/old', 'get').responses)).toEqual(['301']);
    expect(Object.keys(op(doc, '/form', 'post').responses)).toEqual(['303']);
    // Reply lists each status it declares, each with its own body.
    const replace = op(doc, '/items/{id}', 'put').responses;
    expect(replace['200'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Item',
    });
    expect(replace['409'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Problem',
    });
  });

  it('OAS-07 describes the success body under the content type of the contract', () => {
    expect(Object.keys(op(doc, '/items/{id}', 'get').responses['200'].content!)).toEqual([
      'application/json',
    ]);
    expect(op(doc, '/items', 'get').responses['200'].content!['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Item' },
    });
    expect(op(doc, '/items/kinds/text', 'get').responses['200'].content).toEqual({
      'text/plain': { schema: { type: 'string' } },
    });
    expect(op(doc, '/items/kinds/csv', 'get').responses['200'].content).toEqual({
      'text/csv': { schema: { type: 'string' } },
    });
  });

  it('OAS-19 a self-writing class with static openapi is described by that schema under its own content type', () => {
    class Count {
      static contentType = 'text/x-count';
      static openapi = { type: 'integer', format: 'int64' };
      write(out: { write(s: string): void }) {
        out.write('1');
      }
    }
    @Controller()
    class CountController {
      @Get('/count')
      @Returns(Count)
      count(): Count {
        return new Count();
      }
    }
    const d = new App().controllers(CountController).document();
    expect(op(d, '/count', 'get').responses['200'].content).toEqual({
      'text/x-count': { schema: { type: 'integer', format: 'int64' } },
    });
  });

  it('OPEN-57 void is 204 with no content, Bytes is octet-stream binary, a self-writing class without marker is a string, Optional adds 404', () => {
    const remove = op(doc, '/items/{id}', 'delete').responses;
    expect(remove['204']).toEqual({ description: 'No Content' });
    expect(op(doc, '/items/kinds/raw', 'get').responses['200'].content).toEqual({
      'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    });
    expect(op(doc, '/items/kinds/plain', 'get').responses['200'].content).toEqual({
      'application/x-plain': { schema: { type: 'string' } },
    });
    expect(op(doc, '/items/{id}', 'get').responses['404'].content).toEqual({
      'application/json': { schema: FAILURE },
    });
    expect(op(doc, '/items/kinds/csv', 'get').responses).not.toHaveProperty('404');
  });

  it('REF-38 a route without @Returns answers 204, a promise of nothing too; one answering through the Ctx chooses at run time', () => {
    expect(op(doc, '/items/{id}/name', 'get').responses['200'].content).toEqual({
      'text/plain': { schema: { type: 'string' } },
    });
    expect(op(doc, '/answer', 'get').responses).toEqual({ '204': { description: 'No Content' } });
    // A void handler that answers through the Ctx chooses its status at run time: not claimed to be 204.
    expect(op(doc, '/items/kinds/stream', 'get').responses).not.toHaveProperty('204');
    expect(op(doc, '/items/kinds/stream', 'get').responses['200']).not.toHaveProperty('content');
  });

  it('OAS-14 a redirect response records the Location header', () => {
    const moved = op(doc, '/old', 'get').responses['301'];
    expect(moved.headers).toEqual({
      Location: expect.objectContaining({
        required: true,
        schema: expect.objectContaining({ type: 'string' }),
      }),
    });
  });

  it('OAS-15 a redirect response has no content', () => {
    expect(op(doc, '/old', 'get').responses['301']).not.toHaveProperty('content');
    expect(op(doc, '/form', 'post').responses['303']).not.toHaveProperty('content');
  });

  it('OAS-10 a @Body class is the application/json request body, its schema read from class-validator metadata', () => {
    const create = op(doc, '/items', 'post');
    expect(create.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewItem' } } },
    });
    expect(schemas(doc).NewItem).toEqual({
      type: 'object',
      properties: {
        sku: { type: 'string', minLength: 1, maxLength: 32 },
        qty: { type: 'integer', minimum: 1, maximum: 100 },
        note: { type: ['string', 'null'] },
      },
      required: ['sku', 'qty'],
    });
    expect(op(doc, '/items', 'get')).not.toHaveProperty('requestBody');
  });

  it('OAS-10 path parameters are required, a @Query class gives one parameter per property, @Query(name) and @Header(name) are optional', () => {
    expect(op(doc, '/items/{id}', 'get').parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'number' } },
    ]);
    expect(op(doc, '/items', 'get').parameters).toEqual([
      {
        name: 'term',
        in: 'query',
        required: true,
        schema: { type: 'string', pattern: '^[a-z]+$' },
      },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
      { name: 'x-trace', in: 'header', required: false, schema: { type: 'string' } },
    ]);
    expect(op(doc, '/items/{id}/name', 'get').parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'upper', in: 'query', required: false, schema: { type: 'boolean' } },
    ]);
  });

  it('lists 400 when the route reads a body, query or path, and 413 + 415 for a body; never 500', () => {
    const create = op(doc, '/items', 'post').responses;
    for (const s of ['400', '413', '415'])
      expect(create[s].content).toEqual({ 'application/json': { schema: FAILURE } });
    expect(op(doc, '/items', 'get').responses).toHaveProperty('400');
    expect(op(doc, '/items', 'get').responses).not.toHaveProperty('413');
    expect(op(doc, '/items/kinds/text', 'get').responses).not.toHaveProperty('400');
    expect(op(doc, '/old', 'get').responses).not.toHaveProperty('400');
    for (const item of Object.values(doc.paths))
      for (const o of Object.values(item))
        expect((o as unknown as Operation).responses).not.toHaveProperty('500');
  });

  it('OPEN-01 @Authorization gives a security requirement, a bearer/basic security scheme and 401 with WWW-Authenticate', () => {
    expect(doc.components.securitySchemes).toEqual({
      basic: { type: 'http', scheme: 'basic' },
      bearer: { type: 'http', scheme: 'bearer' },
    });
    expect(op(doc, '/items', 'post').security).toEqual([{ bearer: [] }]);
    expect(op(doc, '/items/{id}', 'put').security).toEqual([{ basic: [] }]);
    expect(op(doc, '/items', 'get')).not.toHaveProperty('security');
    const unauthorized = op(doc, '/items', 'post').responses['401'];
    expect(unauthorized.content).toEqual({ 'application/json': { schema: FAILURE } });
    expect(unauthorized.headers!['WWW-Authenticate']).toMatchObject({ schema: { type: 'string' } });
    expect(op(doc, '/items', 'get').responses).not.toHaveProperty('401');
    // A resolved caller may be refused (401) but claims no scheme the declarations do not show.
    expect(op(doc, '/items/{id}/mine', 'get').responses['401'].content).toEqual({
      'application/json': { schema: FAILURE },
    });
    expect(op(doc, '/items/{id}/mine', 'get')).not.toHaveProperty('security');
    expect(new App().controllers(MovesController).document().components).not.toHaveProperty(
      'securitySchemes',
    );
  });

  it('a failure that shares its status with a declared Reply answer offers both bodies', () => {
    class Conflict {
      @IsIn(['taken']) reason!: string;
    }
    @Controller()
    class TakeController {
      @Post('/take')
      @Returns(Reply({ 201: Item, 415: Conflict }))
      take(@Body() item: NewItem) {
        return reply(201, item);
      }
    }
    const d = new App().controllers(TakeController).document();
    expect(op(d, '/take', 'post').responses['415'].content!['application/json'].schema).toEqual({
      oneOf: [{ $ref: '#/components/schemas/Conflict' }, FAILURE],
    });
  });

  it('a @Form class is an application/x-www-form-urlencoded body; a bound form adds 422; @RateLimit adds 429 with Retry-After', () => {
    class Signup {
      @IsString() @Length(3, 20) name!: string;
    }
    @Controller()
    class FormsController {
      @Post('/signup')
      @RateLimit({ max: 5, perSeconds: 60 })
      @Returns(String)
      signup(@Form() form: Signup): string {
        return form.name;
      }

      @Post('/signup/bound')
      @Returns(String)
      signupBound(@Form(Signup) b: Bound<Signup>): string {
        if (!b.ok) throw b.fail();
        return b.value!.name;
      }
    }
    const d = new App().controllers(FormsController).document();
    const plain = op(d, '/signup', 'post');
    expect(plain.requestBody).toEqual({
      required: true,
      content: {
        'application/x-www-form-urlencoded': { schema: { $ref: '#/components/schemas/Signup' } },
      },
    });
    expect(Object.keys(plain.responses)).toEqual(['200', '400', '413', '429']);
    expect(plain.responses['429'].headers!['Retry-After'].schema).toEqual({ type: 'integer' });
    expect(plain.responses['429'].content).toEqual({ 'application/json': { schema: FAILURE } });
    expect(Object.keys(op(d, '/signup/bound', 'post').responses)).toEqual([
      '200',
      '400',
      '413',
      '422',
    ]);
  });

  it('record.failures are listed with the Failure body (health: 503)', () => {
    const d = new App().health('/healthz').document();
    const health = op(d, '/healthz', 'get');
    expect(health.responses['503'].content).toEqual({ 'application/json': { schema: FAILURE } });
    expect(health.responses['200'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/HealthStatus',
    });
    expect(schemas(d).HealthStatus).toMatchObject({
      properties: { status: { enum: ['ok'] } },
      required: ['status'],
    });
  });

  it('comes out in a stable order: paths sorted, methods in OpenAPI order, same text for the same routes', () => {
    expect(Object.keys(doc.paths)).toEqual([...Object.keys(doc.paths)].sort());
    expect(Object.keys(doc.paths['/items'])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/items/{id}'])).toEqual(['get', 'put', 'delete']);
    expect(Object.keys(doc.components.schemas)).toEqual(
      [...Object.keys(doc.components.schemas)].sort(),
    );
    expect(Object.keys(op(doc, '/items', 'post'))).toEqual(
      [
        'tags',
        'operationId',
        'security',
        'parameters',
        'requestBody',
        'responses',
        'x-fw-handler',
      ].filter((k) => k in op(doc, '/items', 'post')),
    );
    expect(Object.keys(doc)).toEqual(['openapi', 'info', 'tags', 'paths', 'components']);
    const again = new App({ title: 'items', version: '2.1.0' })
      .controllers(MovesController, ItemsController)
      .document();
    expect(JSON.stringify(again)).toBe(JSON.stringify(doc));
  });
});

describe('the Failure schema', () => {
  @Controller()
  class OneController {
    @Get('/one/{id}')
    @Returns(Optional(Item))
    one(@Param('id') _id: string): Item | null {
      return null;
    }
  }

  it('OAS-08 with the default shape is an object with error (string) and status (integer)', () => {
    const d = new App().controllers(OneController).document();
    const failure = schemas(d).Failure as {
      type: string;
      required: string[];
      properties: Record<string, { type: string }>;
    };
    expect(failure.type).toBe('object');
    expect(failure.required).toEqual(['error', 'status']);
    expect(failure.properties.error.type).toBe('string');
    expect(failure.properties.status.type).toBe('integer');
    expect(Object.keys(failure.properties)).toEqual(['error', 'status']);
  });

  it("OAS-09 with app.failures(T) is read from T's fields, nested objects included", () => {
    class Detail {
      @IsInt() code!: number;
      @IsEmail() contact!: string;
    }
    class ApiError {
      @IsString() message!: string;
      @IsInt() httpStatus!: number;
      @ValidateNested() @Type(() => Detail) detail!: Detail;
      static failure(status: number, message: string): ApiError {
        return Object.assign(new ApiError(), {
          message,
          httpStatus: status,
          detail: { code: status, contact: 'ops@example.com' },
        });
      }
    }
    const d = new App().controllers(OneController).failures(ApiError).document();
    const all = schemas(d);
    expect(all.Failure).toEqual({
      type: 'object',
      properties: {
        message: { type: 'string' },
        httpStatus: { type: 'integer' },
        detail: { $ref: '#/components/schemas/Detail' },
      },
      required: ['message', 'httpStatus', 'detail'],
    });
    expect(all.Detail).toEqual({
      type: 'object',
      properties: { code: { type: 'integer' }, contact: { type: 'string', format: 'email' } },
      required: ['code', 'contact'],
    });
    expect(all).not.toHaveProperty('ApiError');
    expect(op(d, '/one/{id}', 'get').responses['404'].content).toEqual({
      'application/json': { schema: FAILURE },
    });
  });

  it('OAS-09 a failure class that refers to itself, or is also returned by a route, keeps one schema named Failure', () => {
    class Err {
      @IsString() error!: string;
      @IsOptional() @ValidateNested() @Type(() => Err) cause?: Err;
      static failure(status: number, message: string): Err {
        return Object.assign(new Err(), { error: `${status} ${message}` });
      }
    }
    @Controller()
    class ErrController {
      @Get('/last-error')
      @Returns(Err)
      last(): Err {
        return new Err();
      }
    }
    const d = new App().controllers(ErrController).failures(Err).document();
    expect((schemas(d).Failure.properties as Record<string, unknown>).cause).toEqual({
      anyOf: [FAILURE, { type: 'null' }],
    });
    expect(
      op(d, '/last-error', 'get').responses['200'].content!['application/json'].schema,
    ).toEqual(FAILURE);
    expect(schemas(d)).not.toHaveProperty('Err');
  });

  it('OAS-09 a failure class without class-validator decorators is described as any object', () => {
    class Bare {
      static failure(status: number, message: string) {
        return { status, message };
      }
    }
    const d = new App().controllers(OneController).failures(Bare).document();
    expect(schemas(d).Failure).toEqual({ type: 'object' });
  });

  it('a program class named Failure does not take the place of the failure schema', () => {
    class Failure {
      @IsString() what!: string;
    }
    @Controller()
    class FailuresController {
      @Get('/failures')
      @Returns([Failure])
      list(): Failure[] {
        return [];
      }
    }
    const d = new App().controllers(FailuresController).document();
    expect(schemas(d).Failure).toMatchObject({ required: ['error', 'status'] });
    expect(op(d, '/failures', 'get').responses['200'].content!['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Failure_2' },
    });
    expect(schemas(d).Failure_2).toMatchObject({ properties: { what: { type: 'string' } } });
  });
});
