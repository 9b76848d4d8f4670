import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { packageDoors } from '../package/doors';
import { lockDir } from '../support/dir-lock';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');
// Inside the project so the compiled files resolve node_modules; kept between runs, with tsc's
// incremental build info, so a run with lib unchanged compiles in seconds, not half a minute.
// A lock keeps a second jest run in this checkout from rewriting the files while this one reads.
const DIR = join(ROOT, 'node_modules', '.cache', 'fw-lazy-loading');
const OUT = join(DIR, 'out');
let unlock: (() => Promise<void>) | undefined;

/**
 * What a fresh node loads: lib and the scenarios of lazy-loading.fixture.ts are compiled with the
 * build's settings (tsc, as `npm run build` does) and each scenario runs in a process of its own,
 * so require.cache holds only what that scenario made fw load. ioredis, undici, ws and
 * class-transformer are loaded only by the feature that needs them, class-validator only with a
 * class that declares with it (lazy-validation.fixture.ts imports neither); an app using none of
 * those features loads none of them, which keeps its cold start and idle memory down.
 */
describe('optional packages load with their feature, not with fw', () => {
  beforeAll(async () => {
    mkdirSync(DIR, { recursive: true });
    unlock = await lockDir(join(DIR, 'lock'));
    writeFileSync(
      join(DIR, 'tsconfig.json'),
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.build.json'),
        // The build's options with a build info of its own (the build's lives in dist/).
        compilerOptions: {
          rootDir: ROOT,
          outDir: OUT,
          sourceMap: false,
          inlineSources: false,
          declaration: false,
          incremental: true,
          tsBuildInfoFile: join(DIR, 'build.tsbuildinfo'),
          // Emit only: `npm run typecheck` checks these files; the first run of a fresh checkout
          // then takes seconds instead of a full type-check of lib.
          noCheck: true,
        },
        include: [
          join(ROOT, 'lib'),
          join(__dirname, 'lazy-loading.fixture.ts'),
          join(__dirname, 'lazy-validation.fixture.ts'),
        ],
      }),
    );
    // Exit code 2 is "type errors, files written": `npm run typecheck` owns those, this test only
    // needs the files. Anything else (nothing written) fails here, with tsc's report.
    await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', DIR]).catch(
      (e: { code?: number; stdout?: string }) => {
        if (e.code !== 2) throw new Error(`tsc failed:\n${e.stdout ?? String(e)}`);
      },
    );
    // A second jest run in this checkout may hold the lock for its own compile and tests.
  }, 300_000);
  afterAll(() => unlock?.());

  /** Runs `code` in a fresh node (with `out` the compiled root) and returns what it printed, parsed. */
  async function inFreshNode<T>(code: string): Promise<T> {
    const { stdout } = await run(process.execPath, ['-e', code], {
      cwd: ROOT,
      env: { ...process.env, OUT },
    });
    return JSON.parse(stdout) as T;
  }
  const scenario = (name: string, fixture = 'lazy-loading') =>
    inFreshNode<{ seen: unknown[]; loaded: string[] }>(
      `require(process.env.OUT + '/spec/http/${fixture}.fixture.js').run(${JSON.stringify(name)})` +
        `.then((r) => process.stdout.write(JSON.stringify(r)), (e) => { console.error(e); process.exit(1); })`,
    );

  it.each(Object.entries(packageDoors()))(
    'requiring the %s door loads none of ioredis, undici, ws, class-validator, class-transformer, @opentelemetry/api, busboy',
    async (_door, source) => {
      const loaded = await inFreshNode<string[]>(
        `require(process.env.OUT + '/${source}.js');` +
          `const files = Object.keys(require.cache);` +
          `process.stdout.write(JSON.stringify(['ioredis', 'undici', 'ws', 'class-validator', 'class-transformer', '@opentelemetry/api', 'busboy']` +
          `.filter((n) => files.some((f) => f.includes('/node_modules/' + n + '/')))))`,
      );
      expect(loaded).toEqual([]);
    },
  );

  it('requiring the http door loads no more of lib/fetch than the mark it reads (a Client)', async () => {
    const fetchFiles = await inFreshNode<string[]>(
      `require(process.env.OUT + '/lib/http/index.js');` +
        `process.stdout.write(JSON.stringify(Object.keys(require.cache)` +
        `.filter((f) => f.startsWith(process.env.OUT + '/lib/fetch/')).map((f) => f.slice(process.env.OUT.length)).sort()))`,
    );
    expect(fetchFiles).toEqual(['/lib/fetch/outbound-client.js']);
  });

  it("requiring the http door loads none of the document's, the health route's, static files' or gzip's modules", async () => {
    const features = await inFreshNode<string[]>(
      `require(process.env.OUT + '/lib/http/index.js');` +
        `process.stdout.write(JSON.stringify(Object.keys(require.cache)` +
        `.filter((f) => /\\/features\\/(openapi\\/|static\\/|compress|health)/.test(f))))`,
    );
    expect(features).toEqual([]);
  });

  it.each([
    ['fw-http/openapi', 'lib/http/features/openapi/index'],
    ['fw-http/files', 'lib/http/features/files/index'],
  ])(
    "requiring the %s door loads none of the document builder's, static trees' or gzip's modules",
    async (_door, source) => {
      const features = await inFreshNode<string[]>(
        `require(process.env.OUT + '/${source}.js');` +
          `process.stdout.write(JSON.stringify(Object.keys(require.cache)` +
          `.filter((f) => /\\/features\\/(openapi\\/(?!index)|static\\/|compress)/.test(f))))`,
      );
      expect(features).toEqual([]);
    },
  );

  // node:tls is not part of every app's cold start: RedisStore's driver loads it for a rediss://
  // store only (it was loaded by every app for one commit, through an import of the cache door).
  it.each(['http', 'cache', 'fetch'])(
    'requiring the %s door does not load node:tls',
    async (door) => {
      const tls = await inFreshNode<string[]>(
        `require(process.env.OUT + '/lib/${door}/index.js');` +
          `process.stdout.write(JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (tls|_tls_wrap)$/.test(m))))`,
      );
      expect(tls).toEqual([]);
    },
  );

  it('the fixture sees what it loads: requiring it alone loads none of them', async () => {
    expect(await scenario('required')).toEqual({ seen: [], loaded: [] });
  });

  it('an app serving a GET, validated POSTs and idempotent POSTs (memory store) loads none of them', async () => {
    const r = await scenario('plain app');
    expect(r.seen).toEqual([200, 201, 400, 201, null, 201, 'true']);
    expect(r.loaded).toEqual([]);
  });

  it('an app validating with zod alone (Problem failures, health, a Page, the document) loads neither class-validator nor class-transformer', async () => {
    const r = await scenario('zod app', 'lazy-validation');
    expect(r.seen).toEqual([
      200,
      201,
      400,
      '{"items":[{"id":1}],"total":1,"next":null}',
      200,
      200,
      { type: 'integer' },
      { type: 'array', items: { $ref: '#/components/schemas/Row' } },
      { type: 'string', enum: ['ok'] },
    ]);
    expect(r.loaded).toEqual([]);
  });

  it('an app whose classes declare with class-validator reads them with it (an @IsEmail refuses), class-transformer unloaded', async () => {
    expect(await scenario('required', 'lazy-validation')).toEqual({ seen: [], loaded: [] });
    const r = await scenario('class-validator app', 'lazy-validation');
    expect(r.seen).toEqual([201, 400]);
    expect(r.loaded).toEqual(['class-validator', 'validator', 'libphonenumber-js']);
  });

  it('a Page declared before class-transformer is loaded: plainToInstance builds its items as the item class', async () => {
    expect(await scenario('page unspelled', 'lazy-validation')).toEqual({
      seen: [[], true],
      loaded: ['class-transformer'],
    });
  });

  it('a Client started loads undici, and only undici', async () => {
    expect((await scenario('client built')).loaded).toEqual(['undici']);
  });

  it('an app with a @WebSocketRoute route built loads ws, and only ws', async () => {
    expect((await scenario('websocket route')).loaded).toEqual(['ws']);
  });

  it('a body read by the class-transformer fallback loads class-transformer, and only it', async () => {
    const r = await scenario('fallback body');
    expect(r.seen).toEqual([201, 400]);
    expect(r.loaded).toEqual(['class-transformer']);
  });

  it('class-transformer loaded by the program after fw: its decorators are seen (a @Transform runs)', async () => {
    const r = await scenario('transformer loaded late');
    expect(r.seen).toEqual([201, '{"name":"bob"}']);
    expect(r.loaded).toEqual(['class-transformer']);
  });

  it('an OpenTelemetry SDK registered after fw loaded: the app built then records its spans', async () => {
    const r = await scenario('sdk registered');
    expect(r.seen).toEqual([200, ['GET /small']]);
    expect(r.loaded).toEqual(['@opentelemetry/api']);
  });

  it('an app with an upload route loads busboy only when a multipart form arrives', async () => {
    expect((await scenario('upload route built')).loaded).toEqual([]);
    const r = await scenario('upload');
    expect(r.seen).toEqual([201, '{"size":3}']);
    expect(r.loaded).toEqual(['busboy']);
  });

  it('without busboy installed, build() refuses an upload route naming npm install busboy (not a 500 on the first upload); an urlencoded @Form builds', async () => {
    const r = await scenario('busboy missing');
    expect(r.seen).toEqual([
      'RefusalError',
      expect.stringContaining(
        'POST /upload (Uploads.take): a multipart @Form needs busboy, an optional peer dependency of fw-http: npm install busboy',
      ),
      201,
      '{"name":"ann"}',
    ]);
    expect(r.loaded).toEqual([]);
  });

  it('a RedisStore built loads ioredis, and only ioredis', async () => {
    expect((await scenario('redis store')).loaded).toEqual(['ioredis']);
  });
});
