import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = path.join(__dirname, '..', '..', 'lib', 'cache');
const specifiersOf = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map(
    (m) => m[1],
  );

describe('fw/cache layering (DESIGN §2, STYLE: cache never imports http or fetch)', () => {
  // lib/errors is the one module outside lib/cache it may import: the CodedError that HttpError,
  // CacheError and FetchError share. It imports nothing itself (checked below).
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

  it('has an index.ts door and other files to check', () => {
    expect(files).toContain('index.ts');
    expect(files.length).toBeGreaterThan(1);
  });

  it.each(files)(
    "%s imports only node built-ins, ioredis, pg (PgStore's optional peer), files of lib/cache and lib/errors",
    (file) => {
      for (const spec of specifiersOf(path.join(dir, file))) {
        const ok =
          spec.startsWith('./') ||
          spec.startsWith('node:') ||
          spec === 'ioredis' ||
          spec === 'pg' ||
          spec === '../errors';
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
