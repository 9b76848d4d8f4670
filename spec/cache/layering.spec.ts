import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = path.join(__dirname, '..', '..', 'lib', 'cache');
const specifiersOf = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1],
  );

describe('fw/cache layering (DESIGN §2, STYLE: cache never imports http or fetch)', () => {
  // lib/errors and lib/options are the modules outside lib/cache it may import: the CodedError that
  // HttpError, CacheError and FetchError share, and the option checks. lib/errors imports nothing
  // itself (checked below). Files in lib/cache/redis and lib/cache/pg are checked alike.
  const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) =>
    f.endsWith('.ts'),
  );
  const lib = path.join(dir, '..');
  const allowed = ['cache', 'errors', 'options'].map((m) => path.join(lib, m));

  it('has an index.ts door and other files to check', () => {
    expect(files).toContain('index.ts');
    expect(files.length).toBeGreaterThan(1);
  });

  it.each(files)(
    "%s imports only node built-ins, ioredis, pg (PgStore's optional peer), files of lib/cache, lib/errors and lib/options",
    (file) => {
      const from = path.dirname(path.join(dir, file));
      for (const spec of specifiersOf(path.join(dir, file))) {
        const target = path.resolve(from, spec);
        const ok =
          spec.startsWith('node:') ||
          spec === 'ioredis' ||
          spec === 'pg' ||
          (spec.startsWith('.') &&
            allowed.some((m) => target === m || target.startsWith(m + path.sep)));
        expect({ file, spec, ok }).toEqual({ file, spec, ok: true });
      }
    },
  );

  it('lib/errors, the shared error module, imports nothing', () => {
    const shared = path.join(dir, '..', 'errors');
    const files = readdirSync(shared).filter((f) => f.endsWith('.ts'));
    expect(files).toEqual(['index.ts']);
    expect(specifiersOf(path.join(shared, 'index.ts'))).toEqual([]);
  });
});
