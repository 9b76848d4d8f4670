import { execFileSync } from 'node:child_process';
import * as v from 'valibot';
import { z } from 'zod';
import {
  App,
  Body,
  Controller,
  Get,
  Optional,
  Post,
  Query,
  Reply,
  Returns,
  Status,
  reply,
  type Infer,
} from 'fw-http';

// Standard Schemas on the wire: `@Query(schema)` reads the whole query through a Standard Schema,
// and `@Returns(schema)` / `Reply({ 201: schema })` answer through one: the handler returns what
// the schema takes, what the schema gives is what is written (so undeclared fields never leave),
// and the document names the schema's JSON Schema as a component.

const Search = z.object({
  q: z.string().min(2),
  qty: z.number().int().min(1).max(100).optional(),
  exact: z.boolean().optional(),
  tags: z.array(z.string()).optional(),
  page: z.array(z.number().int()).optional(),
});

const Sort = z.enum(['new', 'old']).meta({ id: 'Sort' });
const Named = z.object({ qty: z.number().int(), sort: Sort.optional() }).meta({ id: 'Named' });

const Lookup = v.object({ q: v.pipe(v.string(), v.minLength(2)) });

const PublicUser = z.object({ id: z.string(), name: z.string() }).meta({ id: 'PublicUser' });
const Refused = z.object({ reason: z.string(), field: z.string() });
const Owner = z.object({ owner: PublicUser, friends: z.array(PublicUser) });
const Later = z.object({ id: z.string() }).refine(async (x) => x.id !== 'bad', 'refused later');
const ValibotUser = v.object({ id: v.string(), name: v.string() });

interface Row {
  id: string;
  name: string;
  passwordHash: string;
}
const row = (id: string): Row => ({ id, name: `user ${id}`, passwordHash: 'secret-hash' });

@Controller('/s')
class SchemaWire {
  @Get('/search')
  @Returns(Object)
  search(@Query(Search) s: Infer<typeof Search>): object {
    // Typed from the schema: qty is a number or undefined, tags a list of strings.
    const qty: number | undefined = s.qty;
    const tags: string[] | undefined = s.tags;
    return {
      q: s.q,
      qty: qty ?? null,
      exact: s.exact ?? null,
      tags: tags ?? null,
      page: s.page ?? null,
    };
  }

  @Get('/named')
  @Returns(Optional(PublicUser))
  named(@Query(Named) s: Infer<typeof Named>) {
    return s.qty === 0 ? null : row(String(s.qty));
  }

  @Get('/lookup')
  @Returns(Object)
  lookup(@Query(Lookup) s: Infer<typeof Lookup>): object {
    return { q: s.q };
  }

  @Get('/users/7')
  @Returns(PublicUser)
  async user(): Promise<Row> {
    return row('7');
  }

  @Post('/users')
  @Returns(Reply({ 201: PublicUser, 422: Refused }))
  create(@Query(Lookup) s: Infer<typeof Lookup>) {
    if (s.q === 'no') return reply(422, { reason: 'taken', field: 'name', extra: 1 });
    return reply(201, row('8'), { Location: '/s/users/8' });
  }

  @Post('/echo')
  @Returns(PublicUser)
  echo(@Body(PublicUser) u: Infer<typeof PublicUser>) {
    return { ...u, passwordHash: 'h' };
  }

  @Get('/owner')
  @Returns(Owner)
  owner() {
    return { owner: row('1'), friends: [row('2'), row('3')] };
  }

  @Get('/broken')
  @Returns(Status(200, PublicUser))
  broken(): Infer<typeof PublicUser> {
    return { id: 7 as unknown as string, name: 'x' };
  }

  @Get('/later')
  @Returns(Later)
  later(@Query(Lookup) s: Infer<typeof Lookup>) {
    return { id: s.q };
  }

  @Get('/valibot')
  @Returns(ValibotUser)
  valibot() {
    return row('9');
  }
}

class TypedOnly {
  @Get('/t')
  // @ts-expect-error a handler under @Returns(schema) returns what the schema takes
  @Returns(PublicUser)
  wrong(): { id: number } {
    return { id: 1 };
  }
}
void TypedOnly;

const lines: string[] = [];
const app = new App({ log: (l) => void lines.push(l) }).controllers(SchemaWire);
type Doc = {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

describe('@Query(schema)', () => {
  it('zod 4: each value converted as the schema types it, then validated and typed', async () => {
    const r = await app.inject({ url: '/s/search?q=ab&qty=3&exact=true&tags=a&tags=b&page=2' });
    expect([r.status, r.json()]).toEqual([
      200,
      { q: 'ab', qty: 3, exact: true, tags: ['a', 'b'], page: [2] },
    ]);
    const plain = await app.inject({ url: '/s/search?q=abc&other=1' });
    expect(plain.json()).toEqual({ q: 'abc', qty: null, exact: null, tags: null, page: null });
  });

  it('a query schema named with .meta({ id }): its properties still read and listed', async () => {
    const r = await app.inject({ url: '/s/named?qty=3&sort=new' });
    expect([r.status, r.body]).toEqual([200, '{"id":"3","name":"user 3"}']);
    expect((await app.inject({ url: '/s/named?qty=0' })).status).toBe(404);
    expect((await app.inject({ url: '/s/named?qty=3&sort=up' })).status).toBe(400);
    const doc = app.document() as unknown as Doc;
    const params = doc.paths['/s/named']!.get!.parameters as Record<string, unknown>[];
    expect(params.map((p) => [p.name, p.required, p.schema])).toEqual([
      ['qty', true, { type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) }],
      ['sort', false, { $ref: '#/components/schemas/Sort' }],
    ]);
    expect(doc.components.schemas.Sort).toEqual({ type: 'string', enum: ['new', 'old'] });
  });

  it('400 naming the first failing path, in the failure shape', async () => {
    for (const [url, at] of [
      ['/s/search?q=ab&qty=0', /^query\.qty: /],
      ['/s/search?q=ab&qty=x', /^query\.qty: /],
      ['/s/search?q=ab&qty=1.5', /^query\.qty: /],
      ['/s/search?qty=3', /^query\.q: /],
      ['/s/search?q=ab&page=1&page=x', /^query\.page\[1\]: /],
      ['/s/lookup?q=a', /^query\.q: /],
      ['/s/lookup', /^query\.q: /],
    ] as const) {
      const r = await app.inject({ url });
      expect([url, r.status]).toEqual([url, 400]);
      expect(r.json<{ error: string; status: number }>().status).toBe(400);
      expect(r.json<{ error: string }>().error).toMatch(at);
    }
    expect((await app.inject({ url: '/s/lookup?q=ab' })).json()).toEqual({ q: 'ab' });
  });

  it('the query bound holds: past maxParams is 400', async () => {
    const small = new App({ log: () => {}, maxParams: 3 }).controllers(SchemaWire);
    const r = await small.inject({ url: '/s/search?q=ab&a=1&b=2&c=3' });
    expect(r.status).toBe(400);
  });

  it("one parameter per property of the schema's JSON Schema, required from `required`", () => {
    const doc = app.document() as unknown as Doc;
    const params = doc.paths['/s/search']!.get!.parameters as Record<string, unknown>[];
    expect(params.map((p) => [p.name, p.in, p.required])).toEqual([
      ['q', 'query', true],
      ['qty', 'query', false],
      ['exact', 'query', false],
      ['tags', 'query', false],
      ['page', 'query', false],
    ]);
    expect(params[1]!.schema).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(params[3]!.schema).toEqual({ type: 'array', items: { type: 'string' } });
    expect(Object.keys((doc.paths['/s/search']!.get!.responses as object) ?? {})).toContain('400');
  });
});

describe('@Returns(schema) and Reply({ 201: schema })', () => {
  it("the schema's output is the wire: a returned passwordHash never leaves", async () => {
    const r = await app.inject({ url: '/s/users/7' });
    expect([r.status, r.body]).toEqual([200, '{"id":"7","name":"user 7"}']);
    const nested = await app.inject({ url: '/s/owner' });
    expect(nested.body).not.toContain('passwordHash');
    expect(nested.json()).toEqual({
      owner: { id: '1', name: 'user 1' },
      friends: [
        { id: '2', name: 'user 2' },
        { id: '3', name: 'user 3' },
      ],
    });
    const vb = await app.inject({ url: '/s/valibot' });
    expect([vb.status, vb.body]).toEqual([200, '{"id":"9","name":"user 9"}']);
  });

  it('a Reply map of schemas: each status written through its own schema, headers kept', async () => {
    const made = await app.inject({ method: 'POST', url: '/s/users?q=ok' });
    expect([made.status, made.headers.location, made.body]).toEqual([
      201,
      '/s/users/8',
      '{"id":"8","name":"user 8"}',
    ]);
    const refused = await app.inject({ method: 'POST', url: '/s/users?q=no' });
    expect([refused.status, refused.json()]).toEqual([422, { reason: 'taken', field: 'name' }]);
  });

  it('a value the schema refuses is a 500 whose log names the route and the path', async () => {
    const before = lines.length;
    const r = await app.inject({ url: '/s/broken' });
    expect(r.status).toBe(500);
    expect(r.json()).toEqual({ error: 'internal server error', status: 500 });
    await new Promise((f) => setImmediate(f));
    const logged = lines.slice(before).join('\n');
    expect(logged).toContain('GET /s/broken (SchemaWire.broken)');
    expect(logged).toContain('the answer.id: ');
    expect(logged).toContain('AnswerMismatch');
  });

  it('an async schema answers once it has settled', async () => {
    expect((await app.inject({ url: '/s/later?q=ok' })).json()).toEqual({ id: 'ok' });
    expect((await app.inject({ url: '/s/later?q=bad' })).status).toBe(500);
  });

  it("the answer's component: the schema's output JSON Schema, named by its id or after the route", () => {
    const doc = app.document() as unknown as Doc;
    const schemas = doc.components.schemas;
    const content = (path: string, method: string, status: string) =>
      (
        (
          doc.paths[path]![method]!.responses as Record<
            string,
            { content: Record<string, unknown> }
          >
        )[status]!.content['application/json'] as { schema: unknown }
      ).schema;
    expect(content('/s/users/7', 'get', '200')).toEqual({
      $ref: '#/components/schemas/PublicUser',
    });
    expect(schemas.PublicUser).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, name: { type: 'string' } },
      required: ['id', 'name'],
      additionalProperties: false,
    });
    expect(content('/s/users', 'post', '201')).toEqual({ $ref: '#/components/schemas/PublicUser' });
    expect(content('/s/users', 'post', '422')).toEqual({
      $ref: '#/components/schemas/SchemaWire.create.422',
    });
    expect(schemas['SchemaWire.create.422']).toMatchObject({ required: ['reason', 'field'] });
    // zod's $defs become components, and its references point at them.
    expect(content('/s/owner', 'get', '200')).toEqual({
      $ref: '#/components/schemas/SchemaWire.owner.200',
    });
    expect(schemas['SchemaWire.owner.200']!.properties).toEqual({
      owner: { $ref: '#/components/schemas/PublicUser' },
      friends: { type: 'array', items: { $ref: '#/components/schemas/PublicUser' } },
    });
    expect(JSON.stringify(doc)).not.toContain('$defs');
    // One schema as a body and as an answer: its input side is a component of its own.
    expect(content('/s/echo', 'post', '200')).toEqual({ $ref: '#/components/schemas/PublicUser' });
    const body = doc.paths['/s/echo']!.post!.requestBody as {
      content: Record<string, { schema: unknown }>;
    };
    expect(body.content['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/PublicUserInput',
    });
    expect(schemas.PublicUserInput).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, name: { type: 'string' } },
      required: ['id', 'name'],
    });
  });

  it('the document with schema components validates as OpenAPI 3.2', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Validator } from '@seriousme/openapi-schema-validator';
         console.log(JSON.stringify(await new Validator().validate(JSON.parse(process.argv[1]))));`,
        JSON.stringify(app.document()),
      ],
      { cwd: process.cwd() },
    ).toString();
    expect(JSON.parse(out)).toEqual({ valid: true });
  });
});
