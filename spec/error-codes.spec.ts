import { HTTP_ERRORS } from 'fw-http';
import { CACHE_ERRORS } from 'fw-http/cache';
import { FETCH_ERRORS } from 'fw-http/fetch';

// One code, one module: a code met in a log or a failure body says which module
// raised it, without the error's class. The only codes two tables share are the two the spec
// itself names in both the server's and the outbound client's lists (FAIL-20/FAIL-23 for
// answers, FETCH-93 for outbound failures); renaming either would break those rules.

const TABLES = {
  'fw-http': HTTP_ERRORS,
  'fw-http/cache': CACHE_ERRORS,
  'fw-http/fetch': FETCH_ERRORS,
} as const;

/** Each code with the doors whose table holds it, for the codes held by more than one. */
function sharedCodes(tables: Record<string, object>): Record<string, string[]> {
  const where = new Map<string, string[]>();
  for (const [door, table] of Object.entries(tables))
    for (const code of Object.keys(table)) where.set(code, [...(where.get(code) ?? []), door]);
  return Object.fromEntries([...where].filter(([, doors]) => doors.length > 1));
}

/** The codes the spec names in two modules, with the rules naming them. */
const SPEC_SHARED = {
  BodyTooLarge: ['FAIL-20', 'FETCH-93'],
  Canceled: ['FAIL-23', 'FETCH-93'],
};

describe('error codes are unique across the three doors', () => {
  it('every code is in one table only, but the two the spec names in both (FAIL-20, FAIL-23, FETCH-93)', () => {
    expect(sharedCodes(TABLES)).toEqual({
      BodyTooLarge: ['fw-http', 'fw-http/fetch'],
      Canceled: ['fw-http', 'fw-http/fetch'],
    });
    expect(Object.keys(SPEC_SHARED).sort()).toEqual(Object.keys(sharedCodes(TABLES)).sort());
  });

  it('FAIL-20 FAIL-23 a code two tables share answers one status in both (BodyTooLarge 413, Canceled 503)', () => {
    const tables: Record<string, Record<string, { status: number }>> = TABLES;
    const statuses = Object.fromEntries(
      Object.entries(sharedCodes(TABLES)).map(([code, doors]) => [
        code,
        [...new Set(doors.map((door) => tables[door]![code]!.status))],
      ]),
    );
    expect(statuses).toEqual({ BodyTooLarge: [413], Canceled: [503] });
  });

  it('the three tables are read whole (each holds codes; the collector finds a clash)', () => {
    for (const table of Object.values(TABLES)) expect(Object.keys(table).length).toBeGreaterThan(4);
    expect(sharedCodes({ a: { X: 1, Y: 1 }, b: { Y: 1 }, c: { Z: 1, X: 1 } })).toEqual({
      X: ['a', 'c'],
      Y: ['a', 'b'],
    });
  });

  it('a code the cache shares with no spec rule carries its module: CachePeerMissing', () => {
    expect(Object.keys(CACHE_ERRORS)).toContain('CachePeerMissing');
    expect(Object.keys(CACHE_ERRORS)).not.toContain('PeerMissing');
    expect(Object.keys(HTTP_ERRORS)).toContain('PeerMissing');
  });
});
