import { App, Controller, Get, Returns, Status } from 'fw-http';

class Csv {
  static contentType = 'text/csv';
  static openapi = { type: 'string' };
  write(out: { write(s: string | Uint8Array): void }) {
    out.write('a,b\n');
    out.write(Buffer.from('1,2\n'));
  }
}
class NoWrite {
  static contentType = 'text/x-half';
}
class NoType {
  write(out: { write(s: string): void }) {
    out.write('x');
  }
}
class BadMarker {
  static contentType = 'text/x-bad';
  static openapi = { type: 'object', properties: {} };
  write() {}
}

describe('self-writing types', () => {
  it('JSON-15 JSON-16 a class with static contentType and write(out) is sent under that type with exactly what write wrote', async () => {
    @Controller()
    class C {
      @Get('/csv') @Returns(Status(201, Csv)) csv() {
        return new Csv();
      }
    }
    const res = await new App({ log: () => {} }).controllers(C).inject({ url: '/csv' });
    expect([res.status, res.headers['content-type'], res.body]).toEqual([
      201,
      'text/csv',
      'a,b\n1,2\n',
    ]);
  });

  it('REF-04 REF-05 REF-09 a half-declared self-writing class, or a non-scalar openapi marker, is refused naming the route', () => {
    @Controller()
    class Half {
      @Get('/nowrite') @Returns(NoWrite) a() {
        return new NoWrite();
      }
      @Get('/notype') @Returns(NoType) b() {
        return new NoType();
      }
      @Get('/marker') @Returns(BadMarker) c() {
        return new BadMarker();
      }
    }
    let problems: string[] = [];
    try {
      new App().controllers(Half).build();
    } catch (e) {
      problems = (e as { problems: string[] }).problems;
    }
    expect(problems).toEqual([
      'GET /nowrite (Half.a): NoWrite has a static contentType but no write(out)',
      'GET /notype (Half.b): NoType has write() but no static contentType',
      "GET /marker (Half.c): BadMarker.openapi may only name a scalar type ({ type: 'string' | 'number' | 'integer' | 'boolean' })",
    ]);
  });
});
