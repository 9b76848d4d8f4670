import { request } from 'undici';
import { App, Controller, Get, Param, Returns } from 'fw-http';
import { declaredWriter } from '../../lib/http/pipeline/declared-writer';

/** The writer of a route whose answers nothing declares field by field. */
const shapeWriter = () => declaredWriter(null, { label: 'GET /item', dropped: null });

// a route's JSON answers are written by a writer that learns the shape it keeps
// returning. Whatever it is given, its text is JSON.stringify's, and its byte count is the text's.

class Item {
  constructor(
    readonly id: unknown,
    readonly name: unknown,
    readonly tags: unknown,
  ) {}
}

class Proto {}
(Proto.prototype as unknown as { inherited: number }).inherited = 1;

const sym = Symbol('s');
/** Values a route of `Item` might return, the learned shape first. */
function corpus(): unknown[] {
  const withToJson = new Item(1, 'a', []) as Item & { toJSON?: (k: string) => unknown };
  withToJson.toJSON = (k: string) => ({ key: k });
  const extra = new Item(1, 'a', []) as Item & { more?: number };
  extra.more = 2;
  const fewer = new Item(1, 'a', []) as Partial<Item>;
  delete (fewer as { tags?: unknown }).tags;
  const reordered = { name: 'a', id: 1, tags: [] };
  const inherited = Object.assign(new Proto(), { id: 1, name: 'a', tags: [] });
  const holes = [1, , 3]; // eslint-disable-line no-sparse-arrays
  const listWithToJson = Object.assign(['x'], { toJSON: () => 'list' });
  return [
    new Item(1, 'small answer', ['a', 'b']),
    new Item(-0, '', []),
    new Item(1.5e300, 'with "quotes" and \\ back', ['\n', '\t']),
    new Item(NaN, 'é ü 日本', ['😀']),
    new Item(Infinity, '\ud800 lone', ['\udc00']),
    new Item(-Infinity, '\u007f\u0000\u001f', [true, false, null]),
    new Item(undefined, undefined, undefined),
    new Item(() => 1, sym, [undefined, () => 1, sym]),
    new Item(null, null, null),
    new Item(true, false, holes),
    new Item(new Date(0), { nested: { deep: ['x', 1] } }, [{ a: 1 }, [1, [2]]]),
    new Item(new String('boxed'), new Number(3), new Boolean(false)),
    new Item({ toJSON: (k: string) => `key ${k}` }, 1, listWithToJson),
    new Item(1, 'a', ['a', 'ü']),
    new Item(1, 'a', 'not a list'),
    withToJson,
    extra,
    fewer,
    reordered,
    inherited,
    { id: 1, name: 'a', tags: [], __proto__: null },
    Object.assign(Object.create(null), { id: 1, name: 'a', tags: [] }),
    { 2: 'b', 1: 'a', id: 1 },
    [],
    ['list', 1],
    'text',
    'tëxt',
    42,
    null,
    undefined,
    true,
    {},
    new Item(1, 'small answer', ['a', 'b']),
  ];
}

describe('a route writes its JSON answers by the shape it learned', () => {
  it('gives the text JSON.stringify gives, for every value, the learned shape and others', () => {
    const w = shapeWriter();
    for (const v of corpus()) {
      const { text, ascii } = w.written(v);
      expect(text).toBe(JSON.stringify(v) ?? 'null');
      if (ascii) expect(Buffer.byteLength(text)).toBe(text.length);
    }
  });

  it('learns the shape of the first object, whatever it is, and stays exact after it', () => {
    for (const first of corpus()) {
      const w = shapeWriter();
      w.text(first);
      for (const v of corpus()) expect(w.text(v)).toBe(JSON.stringify(v) ?? 'null');
    }
  });

  it('writes the learned shape without JSON.stringify and calls it ASCII', () => {
    const w = shapeWriter();
    w.text(new Item(1, 'a', ['b']));
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(w.written(new Item(2, 'small answer', ['a', 'b', 'c']))).toEqual({
        text: '{"id":2,"name":"small answer","tags":["a","b","c"]}',
        ascii: true,
      });
      expect(stringify).not.toHaveBeenCalled();
      expect(w.written(new Item(2, 'ü', [])).ascii).toBe(false);
    } finally {
      stringify.mockRestore();
    }
  });

  it('learns again when the first answer was of another shape, until one is written', () => {
    const w = shapeWriter();
    expect(w.text({ error: 'first' })).toBe('{"error":"first"}');
    expect(w.text(new Item(1, 'a', ['b']))).toBe('{"id":1,"name":"a","tags":["b"]}');
    const stringify = jest.spyOn(JSON, 'stringify');
    try {
      expect(w.text(new Item(2, 'b', []))).toBe('{"id":2,"name":"b","tags":[]}');
      expect(stringify).not.toHaveBeenCalled();
      expect(w.text({ error: 'later' })).toBe('{"error":"later"}'); // the learned shape stays
      expect(stringify).toHaveBeenCalledTimes(1);
    } finally {
      stringify.mockRestore();
    }
  });

  it('reads each property once, in order, as JSON.stringify does', () => {
    const w = shapeWriter();
    w.text({ a: 1, b: 2 });
    const reads: string[] = [];
    const watched = {};
    for (const k of ['a', 'b'])
      Object.defineProperty(watched, k, {
        enumerable: true,
        get: () => (reads.push(k), k === 'a' ? { nested: true } : 'x'),
      });
    expect(w.text(watched)).toBe('{"a":{"nested":true},"b":"x"}');
    expect(reads).toEqual(['a', 'b']);
  });

  it('passes each property its own key in toJSON, and throws where JSON.stringify throws', () => {
    const w = shapeWriter();
    w.text(new Item(1, 'a', []));
    const keys: string[] = [];
    const seen = { toJSON: (k: string) => (keys.push(k), k) };
    expect(w.text(new Item(seen, seen, []))).toBe('{"id":"id","name":"name","tags":[]}');
    expect(keys).toEqual(['id', 'name']);
    expect(() => w.text(new Item(1n, 'a', []))).toThrow(TypeError);
    const loop = new Item(1, 'a', []) as { tags: unknown };
    loop.tags = { back: loop };
    expect(() => w.text(loop)).toThrow(TypeError);
  });
});

/** Declares no field: a declared class is written by its declaration, this one as it comes. */
class Open {}

@Controller()
class ShapeController {
  @Get('/item/{n}')
  @Returns(Open)
  item(@Param('n') n: string) {
    return corpus()[Number(n)] as Open; // any value: the writer is exact for all of them
  }
}

describe('a route of one class answers its JSON byte for byte', () => {
  let app: App;
  let base: string;
  beforeAll(async () => {
    app = new App({ log: () => {} }).controllers(ShapeController);
    base = `http://127.0.0.1:${(await app.listen({ port: 0 })).port}`;
  });
  afterAll(() => app.close());

  it('sends JSON.stringify text with its length in bytes, ASCII or not', async () => {
    const values = corpus();
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === undefined || v === null) continue; // a 204 / a 500 (REF-38): not this writer's
      const res = await request(`${base}/item/${i}`);
      const body = Buffer.from(await res.body.arrayBuffer());
      const expected = Buffer.from(JSON.stringify(v) ?? 'null');
      expect({ i, body: body.toString() }).toEqual({ i, body: expected.toString() });
      expect(res.headers['content-length']).toBe(String(expected.length));
    }
  });
});
