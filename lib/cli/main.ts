#!/usr/bin/env node
import { enableCompileCache } from './compile-cache';

// Before fw and the app are loaded, so that their modules are the ones cached: the rest is
// imported only after this line has run.
enableCompileCache();

void (async () => {
  await import('reflect-metadata');
  const { run } = await import('./index');
  // The package's `bin`: `fw-http openapi|check|routes <entry>` (see ./run).
  process.exitCode = await run(process.argv.slice(2));
})();
