#!/usr/bin/env node
// `npm run check:mutants`: proves that the crash harness's short form (spec/crash/crash.spec.ts,
// the one `npm test` runs) can fail. Each mutant below breaks the atomicity of atomic routes on
// Postgres one way, as an exact replacement of a string of lib/ (found in whichever file holds it,
// exactly once: the script fails loudly when it is not there, so a mutant never silently stops
// applying). A scratch copy of the repository (its files as they are now, or with --head a git
// worktree of HEAD, node_modules linked) first runs the short form unmutated, which must pass;
// then, for each mutant in turn, with the mutant applied, where it must FAIL on one of its checks
// (a failure of the harness itself, such as a server that does not start, is no catch). Prints a
// table mutant → caught or not; exits 1 when any mutant survives or the unmutated run fails.
//
//   npm run check:mutants [-- --head] [-- --only M1,M4]
//
// Not part of `npm test` (each run is the whole short form, about a minute on two cores): .ci/run
// runs it after `npm test`, and the nightly CI job.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const SPEC = 'spec/crash/crash.spec.ts';

/** Each mutant: what it breaks, and the exact text of lib/ it replaces (`from`, exactly once in lib/) by `to`. */
const MUTANTS = [
  {
    id: 'M1',
    what: 'the answer committed in a second transaction (COMMIT, then the keep)',
    from: `    if (!(await tx.keep(this.#key, kept, s.ttlMs, claim))) return false;
    await tx.commit();`,
    to: `    await tx.commit();
    if (!(await tx.keep(this.#key, kept, s.ttlMs, claim))) return false;`,
  },
  {
    id: 'M2',
    what: "the claim's check removed at the commit (the keep without value = $claim)",
    from: `this.#host.sql.putIfEqual, [
      key,
      value,
      ttlMs,
      claim,
    ]);`,
    to: `this.#host.sql.keep, [key, value, ttlMs]);`,
  },
  {
    id: 'M3',
    what: 'a found claim ignored (a claim that lost treated as won)',
    from: `    if (typeof answer === 'bigint') {
      exchangeOf(c).idempotency!.token = answer;`,
    to: `    if (typeof answer === 'bigint' || answer === null) {
      exchangeOf(c).idempotency!.token = answer ?? 1n;`,
  },
  {
    id: 'M4',
    what: 'COMMIT instead of ROLLBACK when the run failed',
    from: `await this.#client.query('ROLLBACK')`,
    to: `await this.#client.query('COMMIT')`,
  },
  {
    id: 'M5',
    what: "a claim taking over a live row (the claim's expires_at <= clock_timestamp() guard gone)",
    from: `
WHERE t.expires_at <= clock_timestamp()`,
    to: ``,
  },
  {
    id: 'M6',
    what: "the answer kept outside the final transaction (on another connection, before the handler's COMMIT)",
    from: `    if (!(await tx.keep(this.#key, kept, s.ttlMs, claim))) return false;`,
    to: `    if (!(await s.store.put(this.#key, kept, s.ttlMs, { expect: claim }))) return false;`,
  },
];

const args = process.argv.slice(2);
const workingTree = !args.includes('--head');
const onlyAt = args.indexOf('--only');
const only = onlyAt === -1 ? null : new Set(args[onlyAt + 1].split(','));

/** Every .ts file under `dir`, relative to the copy's root. */
function tsFiles(root, dir) {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return tsFiles(root, rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** The one file of lib/ holding `from` exactly once; throws (naming the mutant) otherwise. */
function locate(root, mutant) {
  const hits = tsFiles(root, 'lib').flatMap((file) => {
    const n = readFileSync(path.join(root, file), 'utf8').split(mutant.from).length - 1;
    return n === 0 ? [] : [[file, n]];
  });
  if (hits.length !== 1 || hits[0][1] !== 1)
    throw new Error(
      `${mutant.id}: its text is in lib/ ${hits.length === 0 ? 'nowhere' : hits.map(([f, n]) => `${n}× in ${f}`).join(', ')}; it must be there exactly once (lib changed: update the mutant in scripts/check-mutants.mjs):\n${mutant.from}`,
    );
  return hits[0][0];
}

/** A scratch copy of the repository with node_modules linked; its root and how to remove it. */
function scratch() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fw-mutants-'));
  const copy = path.join(dir, 'repo');
  if (workingTree) {
    const skip = new Set([
      'node_modules',
      '.git',
      'dist',
      'coverage',
      'reports',
      '.stryker-tmp',
      'tmp',
    ]);
    cpSync(ROOT, copy, {
      recursive: true,
      filter: (src) => !skip.has(path.basename(src)) || path.dirname(src) !== ROOT,
    });
  } else {
    const added = spawnSync('git', ['worktree', 'add', '--detach', copy, 'HEAD'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    if (added.status !== 0) throw new Error('git worktree add failed');
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  const remove = () => {
    if (!workingTree) spawnSync('git', ['worktree', 'remove', '--force', copy], { cwd: ROOT });
    rmSync(dir, { recursive: true, force: true });
  };
  return { copy, remove };
}

/** Runs the short form in `copy`: whether it passed, how long it took, and its last lines. */
function shortForm(copy) {
  const started = Date.now();
  const r = spawnSync('npx', ['jest', SPEC, '--ci', '--coverage=false'], {
    cwd: copy,
    encoding: 'utf8',
    env: { ...process.env, FORCE_COLOR: '0' },
    maxBuffer: 64 << 20,
    // A short form that hangs is a failure of the harness, not a catch: it fails the check.
    timeout: 15 * 60_000,
    killSignal: 'SIGKILL',
  });
  if (r.error !== undefined || r.signal !== null)
    throw new Error(
      `the short form did not finish (${r.error?.message ?? r.signal}):\n${r.stdout}\n${r.stderr}`.slice(
        -8000,
      ),
    );
  const out = `${r.stdout}\n${r.stderr}`;
  const failed = [...out.matchAll(/^\s+[-+]\s+"(.*)",?$/gm)].map((m) => m[1]);
  // A catch is a check of the harness that failed; a test that failed any other way (an error of
  // the harness itself: a server that did not start) proves nothing about the mutant.
  const blocks = out.split(/^\s+● crash harness/m).slice(1);
  const checked = blocks.length > 0 && blocks.every((b) => b.includes('expect(received)'));
  return {
    passed: r.status === 0,
    checked,
    seconds: (Date.now() - started) / 1000,
    why: failed,
    out,
  };
}

function main() {
  const { copy, remove } = scratch();
  const rows = [];
  let broken = false;
  try {
    const original = new Map();
    // Every mutant located before anything runs: a mutant whose text is gone fails the check at once.
    const chosen = MUTANTS.filter((m) => only === null || only.has(m.id));
    for (const m of chosen) {
      const file = locate(copy, m);
      if (!original.has(file)) original.set(file, readFileSync(path.join(copy, file), 'utf8'));
      m.file = file;
    }
    const base = shortForm(copy);
    console.log(`unmutated: ${base.passed ? 'passes' : 'FAILS'} (${base.seconds.toFixed(0)} s)`);
    if (!base.passed) {
      console.log(base.out.slice(-6000));
      broken = true;
      return;
    }
    for (const m of chosen) {
      const text = original.get(m.file);
      writeFileSync(path.join(copy, m.file), text.replace(m.from, m.to));
      const r = shortForm(copy);
      writeFileSync(path.join(copy, m.file), text);
      const caught = !r.passed && r.checked;
      const why = caught ? r.why.slice(0, 3).join('; ') : r.passed ? '' : 'the harness failed';
      rows.push({ ...m, caught, seconds: r.seconds, why });
      console.log(`${m.id}: ${caught ? 'caught' : 'NOT CAUGHT'} (${r.seconds.toFixed(0)} s)`);
      if (!r.passed && !r.checked) console.log(r.out.slice(-6000));
    }
  } finally {
    remove();
  }
  console.log(
    '\n| mutant | what it breaks | file | caught by the short form | seconds | what failed |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.id} | ${r.what} | ${r.file} | ${r.caught ? 'caught' : '**not caught**'} | ${r.seconds.toFixed(0)} | ${r.why} |`,
    );
  if (broken || rows.some((r) => !r.caught)) process.exitCode = 1;
}

main();
