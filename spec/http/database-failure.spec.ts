import { databaseFailure } from '../../lib/cache/pg/database-failure';

// Which errors of a handler's statement are the database's (503 on an atomic route) and which
// are the statement's own (the handler's failure).

const pgError = (code: string) => Object.assign(new Error(`pg error ${code}`), { code });

describe('databaseFailure', () => {
  it.each(['08006', '08003', '57P01', '57P02', '57P03', '57014', '53300', '53100', '58030'])(
    'SQLSTATE %s is a failure of the database',
    (code) => expect(databaseFailure(pgError(code))).toBe(`SQLSTATE ${code}`),
  );

  it.each(['23505', '23503', '42601', '42P01', '22P02', '40001', '40P01', '55P03', 'P0001'])(
    "SQLSTATE %s is the statement's own failure",
    (code) => expect(databaseFailure(pgError(code))).toBeNull(),
  );

  it('a socket gone (ECONNRESET, EPIPE) and pg\'s "Connection terminated" are failures of the database', () => {
    expect(databaseFailure(pgError('ECONNRESET'))).toBe('ECONNRESET');
    expect(databaseFailure(pgError('EPIPE'))).toBe('EPIPE');
    expect(databaseFailure(new Error('Connection terminated unexpectedly'))).toBe(
      'Connection terminated unexpectedly',
    );
    expect(
      databaseFailure(new Error('Client has encountered a connection error and is not queryable')),
    ).not.toBeNull();
  });

  it('anything else is not: a plain error, a string, null', () => {
    expect(databaseFailure(new Error('the bank is down'))).toBeNull();
    expect(databaseFailure('Connection terminated')).toBeNull();
    expect(databaseFailure(null)).toBeNull();
    expect(databaseFailure(pgError('ENOENT'))).toBeNull();
  });
});
