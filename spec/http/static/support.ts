import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App } from 'fw-http';

const made: string[] = [];

/** A temp directory holding `files` (name → content); removed by `cleanTrees()`. */
export function tree(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), 'fw-static-'));
  made.push(root);
  for (const [name, content] of Object.entries(files)) {
    const path = join(root, ...name.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return root;
}

export function cleanTrees(): void {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** An app with its log lines kept: each line (one JSON object in pino's shape) parsed in `records`, its `msg` in `lines`. */
export function appWithLog(): {
  app: App;
  lines: string[];
  records: Record<string, unknown>[];
} {
  const lines: string[] = [];
  const records: Record<string, unknown>[] = [];
  const keep = (l: string) => {
    const record = JSON.parse(l) as Record<string, unknown>;
    records.push(record);
    lines.push(String(record.msg));
  };
  return { app: new App({ log: keep }), lines, records };
}

/** Text that gzips well, `n` bytes. */
export const text = (n: number): string =>
  'fw static file line\n'.repeat(Math.ceil(n / 20)).slice(0, n);

/** Bytes that gzip cannot make smaller, `n` of them. */
export function noise(n: number): Buffer {
  const b = Buffer.alloc(n);
  let x = 123456789;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
