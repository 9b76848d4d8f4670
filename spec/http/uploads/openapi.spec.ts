import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { App, Controller, Form, Post, Returns, Status } from 'fw-http';
import { FormFile, type UploadedFile } from 'fw-http/uploads';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');

class Gallery {
  @IsString() @Length(1, 80) title!: string;
  @IsOptional() @IsInt() @Min(1) @Max(10) rank?: number;
  @FormFile({ maxBytes: 5 << 20, types: ['image/png', 'image/jpeg'] }) cover!: UploadedFile;
  @FormFile({ count: 4, required: false, types: ['image/png'] }) extras!: UploadedFile[];
}

@Controller()
class Galleries {
  @Post('/galleries')
  @Returns(Status(201, Object))
  create(@Form() g: Gallery) {
    return { title: g.title };
  }
}

describe('the OpenAPI operation of an upload route', () => {
  const doc = new App({ log: () => {} }).controllers(Galleries).document() as unknown as {
    paths: Record<
      string,
      Record<string, { requestBody: unknown; responses: Record<string, unknown> }>
    >;
  };
  const op = doc.paths['/galleries'].post;

  it('is a multipart/form-data body: fields with constraints, files as 3.1 binary strings, required list', () => {
    expect(op.requestBody).toEqual({
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: {
              title: { type: 'string', minLength: 1, maxLength: 80 },
              rank: { type: 'integer', minimum: 1, maximum: 10 },
              cover: {
                type: 'string',
                format: 'binary',
                description: 'A file of at most 5242880 bytes: image/png, image/jpeg',
              },
              extras: {
                type: 'array',
                maxItems: 4,
                items: {
                  type: 'string',
                  format: 'binary',
                  contentMediaType: 'image/png',
                  description: 'A file: image/png',
                },
              },
            },
            required: ['title', 'cover'],
          },
          encoding: {
            cover: { contentType: 'image/png, image/jpeg' },
            extras: { contentType: 'image/png' },
          },
        },
      },
    });
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['201', '400', '413', '415']));
  });

  it('the document validates (OpenAPI 3.2, @seriousme/openapi-schema-validator)', async () => {
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      const v = new Validator();
      const r = await v.validate(JSON.parse(process.argv[1]));
      console.log(JSON.stringify({ version: v.version, ...r }));`;
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', script, JSON.stringify(doc)],
      { cwd: ROOT },
    );
    const result = JSON.parse(stdout) as { valid: boolean; errors?: unknown };
    expect(result.errors).toBeUndefined();
    expect(result).toMatchObject({ valid: true, version: '3.2' });
  });
});
