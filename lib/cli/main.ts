#!/usr/bin/env node
import 'reflect-metadata';
import { run } from './index';

// The package's `bin`: `fw-http openapi|check|routes <entry>` (see ./run).
void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
