import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { IsString } from 'class-validator';
import { App, Controller, Get, Param, Returns, Versioned } from 'fw-http';
import { Dir, FileBody } from 'fw-http/files';

class Doc {
  @IsString() id!: string;
}

@Controller()
class C {
  @Get('/docs/{id}') @Returns(Versioned(Doc)) one(@Param('id') id: string) {
    return Versioned.of(1, { id });
  }
  @Get('/files/{name}') @Returns(FileBody) file(@Param('name') name: string, dir: Dir) {
    return new FileBody({ dir, name });
  }
}

const doc = new App({ log: () => {} })
  .controllers(C)
  .provide(Dir.open(mkdtempSync(`${tmpdir()}/fw-oas-`)))
  .document() as unknown as {
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<
          string,
          { headers?: Record<string, unknown>; content?: Record<string, { schema: object }> }
        >;
      }
    >
  >;
};

describe('OpenAPI of answer types', () => {
  it('OAS-16 a FileBody answer is application/octet-stream with type string, format binary', () => {
    const ok = doc.paths['/files/{name}'].get.responses['200'];
    expect(ok.content).toEqual({
      'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    });
  });

  it('OAS-17 a Versioned route puts an ETag header on its 200', () => {
    expect(Object.keys(doc.paths['/docs/{id}'].get.responses['200'].headers ?? {})).toContain(
      'ETag',
    );
  });

  it('OAS-18 a Versioned route lists a 304 beside the 200', () => {
    const r = doc.paths['/docs/{id}'].get.responses;
    expect(r['304']).toBeDefined();
    expect(r['304'].content).toBeUndefined();
  });
});
