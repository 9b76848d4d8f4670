import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// The API report (api/report.md) is every export of the three doors with its type: a change to the
// public surface is a visible diff. `npm run api:report` rewrites it.

const ROOT = join(__dirname, '..', '..');
const report = (...args: string[]) =>
  promisify(execFile)(
    process.execPath,
    [join(ROOT, 'scripts', 'api-report.mjs'), '--check', ...args],
    { cwd: ROOT },
  );

// Each test runs the report (a TypeScript program over the three doors): tens of seconds on a loaded machine.
jest.setTimeout(120_000);

describe('the API report', () => {
  it('I28.3 api/report.md is the public API of all three doors', async () => {
    const { stdout } = await report();
    expect(stdout).toContain('is the API');
    const text = readFileSync(join(ROOT, 'api', 'report.md'), 'utf8');
    for (const door of ['## fw-http', '## fw-http/cache', '## fw-http/fetch'])
      expect(text).toContain(`\n${door}\n`);
    expect(text).toMatch(/^class App$/m);
    expect(text).not.toMatch(/^ {2}(#|telemetry:|writeFailure:)/m); // private and @internal members are not API
  });

  it('I28.3 the options an exported type takes from an interface no door exports are in the report', () => {
    // RedisStoreOptions is `CommonOptions & (…)`: `maxBatch` was added unseen until this was listed.
    const text = readFileSync(join(ROOT, 'api', 'report.md'), 'utf8');
    const redis = text.slice(text.indexOf('\ntype RedisStoreOptions'));
    expect(redis).toMatch(
      /^ {2}\(CommonOptions, not exported\)\n(?: {2}.*\n)*? {2}maxBatch\?: number$/m,
    );
    expect(text).toMatch(
      /^ {2}\(PgCommonOptions, not exported\)\n(?: {2}.*\n)*? {2}poolSize\?: number$/m,
    );
  });

  it('I28.3 a report that differs from the API fails, naming the line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fw-api-'));
    try {
      const stale = join(dir, 'report.md');
      writeFileSync(
        stale,
        readFileSync(join(ROOT, 'api', 'report.md'), 'utf8').replace(/^class App$/m, 'class Ap'),
      );
      const err = await report(stale).then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      expect(err?.code).toBe(1);
      expect(err?.stderr).toMatch(/is not the API from line \d+:\n- class Ap\n\+ class App/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
