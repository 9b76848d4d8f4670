import * as v from 'valibot';
import { App, Controller, Get, Query, Returns, type Infer, type JsonSchemaOf } from 'fw-http';

// a Standard Schema documents itself through Standard JSON Schema
// (`~standard.jsonSchema`, zod 4); valibot 1 offers none, so `App({ jsonSchemaOf })` gives it
// (in a real program `toJsonSchema` of `@valibot/to-json-schema`). Without one the answer is
// described as any object and the query as nothing.

const Search = v.object({
  q: v.pipe(v.string(), v.minLength(2)),
  qty: v.optional(v.pipe(v.number(), v.integer())),
});
const Found = v.object({ q: v.string(), qty: v.number() });

/** A converter for the valibot pieces above, standing where `@valibot/to-json-schema` would. */
type Node = {
  type: string;
  entries?: Record<string, Node>;
  wrapped?: Node;
  pipe?: { type: string; requirement?: unknown }[];
};
const toJson = (s: Node): Record<string, unknown> => {
  const inner = s.pipe?.[0] as Node | undefined;
  if (inner !== undefined && inner !== s) {
    const base = toJson(inner);
    for (const a of s.pipe!.slice(1)) {
      if (a.type === 'min_length') base.minLength = a.requirement;
      if (a.type === 'integer') base.type = 'integer';
    }
    return base;
  }
  if (s.type === 'object') {
    const entries = Object.entries(s.entries ?? {});
    return {
      type: 'object',
      properties: Object.fromEntries(
        entries.map(([k, e]) => [k, toJson(e.type === 'optional' ? e.wrapped! : e)]),
      ),
      required: entries.filter(([, e]) => e.type !== 'optional').map(([k]) => k),
    };
  }
  return { type: s.type };
};
const jsonSchemaOf: JsonSchemaOf = (schema) =>
  (schema as { '~standard': { vendor: string } })['~standard'].vendor === 'valibot'
    ? toJson(schema as unknown as Node)
    : null;

@Controller('/v')
class ValibotController {
  @Get('/search')
  @Returns(Found)
  search(@Query(Search) s: Infer<typeof Search>) {
    return { q: s.q, qty: s.qty ?? 1, passwordHash: 'h' };
  }
}

type Doc = {
  paths: Record<string, Record<string, { parameters?: Record<string, unknown>[] }>>;
  components: { schemas: Record<string, unknown> };
};

describe('valibot documents itself through App({ jsonSchemaOf })', () => {
  it('with jsonSchemaOf: query parameters and the answer component from it; ?qty=3 reads as a number', async () => {
    const app = new App({ log: () => {}, jsonSchemaOf }).controllers(ValibotController);
    const doc = app.document() as unknown as Doc;
    expect(doc.paths['/v/search']!.get!.parameters!.map((p) => [p.name, p.required])).toEqual([
      ['q', true],
      ['qty', false],
    ]);
    expect(doc.components.schemas['ValibotController.search.200']).toEqual({
      type: 'object',
      properties: { q: { type: 'string' }, qty: { type: 'number' } },
      required: ['q', 'qty'],
    });
    const r = await app.inject({ url: '/v/search?q=ab&qty=3' });
    expect([r.status, r.body]).toEqual([200, '{"q":"ab","qty":3}']);
    const bad = await app.inject({ url: '/v/search?q=ab&qty=x' });
    expect([bad.status, bad.json<{ error: string }>().error]).toEqual([
      400,
      expect.stringMatching(/^query\.qty: /),
    ]);
  });

  it('without it: the answer is any object, the query undescribed, its values text', async () => {
    const app = new App({ log: () => {} }).controllers(ValibotController);
    const doc = app.document() as unknown as Doc;
    expect(doc.paths['/v/search']!.get!.parameters).toBeUndefined();
    expect(doc.components.schemas['ValibotController.search.200']).toEqual({ type: 'object' });
    // valibot's v.number() refuses the text "3": with no JSON Schema nothing says to convert it.
    expect((await app.inject({ url: '/v/search?q=ab&qty=3' })).status).toBe(400);
    expect((await app.inject({ url: '/v/search?q=ab' })).body).toBe('{"q":"ab","qty":1}');
  });
});
