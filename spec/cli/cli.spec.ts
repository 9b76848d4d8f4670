import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { run } from '../../lib/cli';

// `fw-http openapi|check|routes <entry>`, run in-process over entries in ./fixtures. The package's
// own `npm test` also runs the built bin against the sample (`npm run check:openapi`).

const ENTRY = path.join(__dirname, 'fixtures', 'orders-entry.ts');

async function cli(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

describe('fw-http command line', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'fw-cli-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('openapi writes the app document to -o, and to stdout without it', async () => {
    const file = path.join(dir, 'nested', 'openapi.json');
    const written = await cli('openapi', ENTRY, '-o', file);
    expect(written.code).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    expect(doc.openapi).toBe('3.2.0');
    expect(Object.keys(doc.paths)).toEqual(['/orders']);
    const printed = await cli('openapi', ENTRY);
    expect(JSON.parse(printed.out)).toEqual(doc);
  });

  it('check exits 0 on the current document and 1 with a readable diff on a drifted one', async () => {
    const file = path.join(dir, 'openapi.json');
    await cli('openapi', ENTRY, '-o', file);
    expect((await cli('check', ENTRY, '--against', file)).code).toBe(0);

    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.info.version = '9.9.9';
    doc.paths['/gone'] = { get: {} };
    delete doc.paths['/orders'].post.responses['201'];
    doc.tags.push({ name: 'Extra' });
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const drift = await cli('check', ENTRY, '--against', file);
    expect(drift.code).toBe(1);
    expect(drift.err).toContain('- /paths/~1gone');
    expect(drift.err).toContain(`- /tags/${doc.tags.length - 1}\n`); // a list differs index by index
    expect(drift.err).toContain('+ /paths/~1orders/post/responses/201');
    expect(drift.err).toMatch(/~ \/info\/version: "9\.9\.9" → "[^"]+"/);
    expect(drift.err).toContain(`fw-http openapi ${ENTRY} -o ${file}`);
  });

  it('routes prints method, path, handler, idempotent, guards and version', async () => {
    const { code, out } = await cli('routes', ENTRY);
    expect(code).toBe(0);
    const [head, ...rows] = out.trimEnd().split('\n');
    expect(head!.split(/\s+/)).toEqual([
      'METHOD',
      'PATH',
      'HANDLER',
      'IDEMPOTENT',
      'GUARDS',
      'VERSION',
    ]);
    expect(rows.map((r) => r.split(/\s+/))).toContainEqual([
      'POST',
      '/orders',
      'Orders.create',
      'yes',
      '-',
      '-',
    ]);
  });

  it('routes says which idempotent routes are atomic: IDEMPOTENT is atomic, yes or no', async () => {
    const { code, out } = await cli('routes', path.join(__dirname, 'fixtures', 'atomic-entry.ts'));
    expect(code).toBe(0);
    const rows = out
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((r) => r.split(/\s+/).slice(0, 4));
    expect(rows).toEqual([
      ['POST', '/payments', 'Ledger.pay', 'atomic'],
      ['POST', '/notes', 'Ledger.note', 'yes'],
      ['POST', '/pings', 'Ledger.ping', 'no'],
    ]);
  });

  it('an entry without an app, a missing entry and bad words exit 2 saying why', async () => {
    const none = await cli('routes', path.join(__dirname, 'fixtures', 'not-an-app.ts'));
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/exports no fw app: export the app \(or a function making it\)/);
    expect((await cli('routes', path.join(dir, 'missing.js'))).code).toBe(2);
    expect((await cli('check', ENTRY)).err).toContain('usage: fw-http');
    expect((await cli('nonsense', ENTRY)).code).toBe(2);
    expect((await cli('openapi', ENTRY, '--weird', 'x')).code).toBe(2);
  });

  it.each(['toString', 'constructor', 'valueOf', '__proto__', 'hasOwnProperty'])(
    'a command named like an object property (%s) is a usage error: exit 2, no stack trace',
    async (word) => {
      const { code, err } = await cli(word, ENTRY);
      expect(code).toBe(2);
      expect(err).toMatch(/^usage: fw-http/);
      expect(err).not.toMatch(/\n\s+at /);
      expect((await cli('openapi', ENTRY, word, 'x')).code).toBe(2);
    },
  );
});
