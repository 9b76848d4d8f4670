import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * The doors of package.json `exports`, each with its source under lib/ (without `.ts`):
 * `{ 'fw-http': 'lib/http/index', 'fw-http/cache': 'lib/cache/index', … }`, the root first.
 */
export function packageDoors(root = ROOT): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const doors: Record<string, string> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string' || target.types === undefined) continue;
    doors[pkg.name + key.slice(1)] = target.types
      .replace(/^\.\/dist\//, '')
      .replace(/\.d\.ts$/, '');
  }
  return doors;
}
