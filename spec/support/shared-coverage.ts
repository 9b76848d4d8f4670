import { Session, type Profiler } from 'node:inspector';
import { CoverageInstrumenter, type V8Coverage } from 'collect-v8-coverage';

// jest's V8 coverage (collect-v8-coverage, called by jest-runtime for each spec file) starts
// precise coverage, enables the Debugger and stops both again around every file. Enabling the
// Debugger turns off V8's compilation cache, because with the cache on, a file that reuses a
// function compiled by an earlier file after coverage was stopped (which drops every function's
// counters) reports none of its blocks (jest#14766, Node >= 20.10). The price: every file
// compiles lib and its packages afresh, Debugger.enable reports every script the worker holds,
// and each start walks the whole heap; measured here, twice the CPU of the run without coverage.
//
// Here each jest worker starts precise coverage once, on one session of its own, and never
// stops it: no function loses its counters, so the compilation cache is safe and stays on. A
// file's coverage is what `Profiler.takePreciseCoverage` (which also resets the counters)
// answers at its end, after a take at its start has dropped what ran in between. jest
// receives the same V8 data as from its own instrumenter (call counts, block ranges) and merges
// and maps it as before; the totals match jest's own collection within the run-to-run noise of
// timing-dependent branches. FW_JEST_COVERAGE=stock leaves jest's instrumenter as it is.

let shared: Promise<(method: string) => Promise<unknown>> | null = null;

function startOnce(): Promise<(method: string) => Promise<unknown>> {
  shared ??= (async () => {
    const session = new Session();
    session.connect();
    const post = (method: string, params?: object): Promise<unknown> =>
      new Promise((resolve, reject) =>
        session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result))),
      );
    await post('Profiler.enable');
    await post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
    return post;
  })();
  return shared;
}

const PATCHED = Symbol.for('fw.sharedCoverage');

/** Makes this process's CoverageInstrumenter share one running coverage session (once; idempotent). */
export function shareCoverageSession(): void {
  if (process.env.FW_JEST_COVERAGE === 'stock') return;
  const proto = CoverageInstrumenter.prototype as unknown as Record<symbol, boolean>;
  if (proto[PATCHED]) return;
  proto[PATCHED] = true;
  CoverageInstrumenter.prototype.startInstrumenting = async function (): Promise<void> {
    const post = await startOnce();
    await post('Profiler.takePreciseCoverage'); // what ran before this file is not its coverage
  };
  CoverageInstrumenter.prototype.stopInstrumenting = async function (): Promise<V8Coverage> {
    const post = await startOnce();
    const { result } = (await post('Profiler.takePreciseCoverage')) as {
      result: Profiler.ScriptCoverage[];
    };
    return result;
  };
}
