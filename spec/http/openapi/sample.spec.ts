import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { shop } from '../../../sample/shop/shop';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');

/** The sample's document, checked by other people's tools. */
describe("the sample shop's OpenAPI document", () => {
  const doc = shop({ log: () => {}, openapiOut: null }).document();
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fw-openapi-sample-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('OAS-01 is valid OpenAPI 3.2 for @seriousme/openapi-schema-validator', async () => {
    // The validator is an ES module; it runs in its own node process.
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      import { readFileSync } from 'node:fs';
      const v = new Validator();
      const r = await v.validate(JSON.parse(readFileSync(process.argv[1], 'utf8')));
      console.log(JSON.stringify({ version: v.version, ...r }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, file], {
      cwd: ROOT,
    });
    const result = JSON.parse(stdout) as { valid: boolean; version: string; errors?: unknown };
    expect(result.errors).toBeUndefined();
    expect(result).toMatchObject({ valid: true, version: '3.2' });
  });

  it('the validator does catch a broken document (the check above can fail)', async () => {
    const broken = join(dir, 'broken.json');
    // 3.2 lets a response leave out its description; a media type member 3.2 does not know is wrong.
    const media = { 'text/event-stream': { itemSchemas: { type: 'object' } } };
    writeFileSync(
      broken,
      JSON.stringify({
        ...doc,
        paths: { '/x': { get: { responses: { 200: { description: 'ok', content: media } } } } },
      }),
    );
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      import { readFileSync } from 'node:fs';
      console.log(JSON.stringify(await new Validator().validate(JSON.parse(readFileSync(process.argv[1], 'utf8')))));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, broken], {
      cwd: ROOT,
    });
    expect(JSON.parse(stdout).valid).toBe(false);
  });

  it('passes redocly lint with no errors (rules off in redocly.yaml say why)', async () => {
    const bin = join(ROOT, 'node_modules/.bin/redocly');
    const env = {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      NO_COLOR: '1',
    };
    const lint = async (f: string) => {
      const r = await run(
        bin,
        ['lint', f, '--format=json', '--config', join(ROOT, 'redocly.yaml')],
        { cwd: ROOT, env, maxBuffer: 16 << 20 },
      ).catch((e: { stdout: string }) => e);
      return JSON.parse(r.stdout) as {
        totals: { errors: number; warnings: number };
        problems: { ruleId: string; severity: string; message: string }[];
      };
    };
    const report = await lint(file);
    expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
    // And it would say so: an operation with an unresolvable $ref is an error.
    const broken = join(dir, 'broken-ref.json');
    writeFileSync(
      broken,
      JSON.stringify(doc).replace('#/components/schemas/Order"', '#/components/schemas/Nowhere"'),
    );
    expect((await lint(broken)).totals.errors).toBeGreaterThan(0);
  }, 60_000);

  it('OAS-01 declares the events of GET /events with an OpenAPI 3.2 itemSchema: data is JSON text of { n: integer }', () => {
    const ok = (doc.paths['/events']!.get as { responses: Record<string, unknown> }).responses[
      '200'
    ] as { content: Record<string, { itemSchema?: unknown; schema?: unknown }> };
    expect(Object.keys(ok.content)).toEqual(['text/event-stream']);
    expect(ok.content['text/event-stream']).toEqual({
      itemSchema: {
        type: 'object',
        required: ['data'],
        properties: {
          data: {
            type: 'string',
            contentMediaType: 'application/json',
            contentSchema: {
              type: 'object',
              properties: { n: { type: 'integer' } },
              required: ['n'],
            },
          },
        },
      },
    });
  });

  it("describes the sample's routes: orders, catalog, health, the redirect", () => {
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/catalog', '/old-catalog', '/orders', '/healthz']),
    );
    expect(doc.paths['/orders']).toHaveProperty('post');
    expect(doc.paths).not.toHaveProperty('/openapi.json');
    expect(doc.paths).not.toHaveProperty('/docs');
    expect(doc.info).toEqual({ title: 'fw sample shop', version: '1.0.0' });
  });
});
