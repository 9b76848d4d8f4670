import { join } from 'node:path';
import { packageDoors } from '../package/doors';

// The root door holds what a first app needs, at most 50 run-time names; every other topic has a
// subpath door of package.json `exports`. Types do not count: TypeScript erases them.

const ROOT = join(__dirname, '..', '..');
const DOORS = packageDoors();
const load = (source: string) => require(join(ROOT, source)) as Record<string, unknown>;

/** The names the doors export at run time, by door. */
const NAMES = Object.fromEntries(
  Object.entries(DOORS).map(([door, source]) => [door, Object.keys(load(source))]),
);

/** The one name exported by more than one door: the base class every module's error extends. */
const SHARED = ['CodedError'];

describe('the doors of fw-http (CORE-57)', () => {
  it('the root door exports at most 50 run-time names', () => {
    expect(Object.keys(require('../../lib/http') as object).length).toBeLessThanOrEqual(50);
    expect(NAMES['fw-http']!.length).toBeLessThanOrEqual(50);
  });

  it('the root door keeps what a first app needs', () => {
    const root = load(DOORS['fw-http']!);
    for (const name of [
      ...['App', 'Controller', 'Get', 'Post', 'Put', 'Patch', 'Delete', 'Head', 'Options'],
      ...['Body', 'Param', 'Query', 'Header', 'Form', 'Authorization', 'Inject'],
      ...['Returns', 'Status', 'Optional', 'Reply', 'reply', 'Redirect', 'Bytes', 'headers'],
      ...['fail', 'Problem', 'HttpError', 'RefusalError', 'Idempotent', 'Ctx', 'Run'],
    ])
      expect({ name, exported: typeof root[name] }).not.toEqual({ name, exported: 'undefined' });
  });

  it('has the subpath doors by topic, each loading on its own with run-time names', () => {
    expect(Object.keys(DOORS).sort()).toEqual(
      [
        'fw-http',
        'fw-http/atomic',
        'fw-http/browser',
        'fw-http/cache',
        'fw-http/capabilities',
        'fw-http/fetch',
        'fw-http/files',
        'fw-http/jwt',
        'fw-http/mcp',
        'fw-http/openapi',
        'fw-http/uploads',
        'fw-http/ws',
      ].sort(),
    );
    for (const [door, names] of Object.entries(NAMES))
      expect({ door, names: names.length > 0 }).toEqual({ door, names: true });
  });

  it("a name is exported by one door only (CodedError, the base of every module's errors, excepted)", () => {
    const doorsOf = new Map<string, string[]>();
    for (const [door, names] of Object.entries(NAMES))
      for (const name of names) doorsOf.set(name, [...(doorsOf.get(name) ?? []), door]);
    const twice = [...doorsOf].filter(
      ([name, doors]) => doors.length > 1 && !SHARED.includes(name),
    );
    expect(twice).toEqual([]);
  });

  it('no class, function or object is exported under two names', () => {
    const namesOf = new Map<unknown, Set<string>>();
    for (const source of Object.values(DOORS))
      for (const [name, value] of Object.entries(load(source)))
        if (typeof value === 'function' || (typeof value === 'object' && value !== null))
          namesOf.set(value, new Set([...(namesOf.get(value) ?? []), name]));
    const twins = [...namesOf.values()].filter((n) => n.size > 1).map((n) => [...n]);
    expect(twins).toEqual([]);
  });
});
