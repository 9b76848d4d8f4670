import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = path.join(__dirname, '..', '..', 'lib', 'cache');

describe('fw/cache layering (DESIGN §2, STYLE: cache never imports http or fetch)', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

  it('has an index.ts door and other files to check', () => {
    expect(files).toContain('index.ts');
    expect(files.length).toBeGreaterThan(1);
  });

  it.each(files)('%s imports only node built-ins, ioredis and files of lib/cache', (file) => {
    const source = readFileSync(path.join(dir, file), 'utf8');
    const specifiers = [...source.matchAll(/(?:from|import|require\()\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);
    for (const spec of specifiers) {
      const ok = spec.startsWith('./') || spec.startsWith('node:') || spec === 'ioredis';
      expect({ file, spec, ok }).toEqual({ file, spec, ok: true });
    }
  });
});
