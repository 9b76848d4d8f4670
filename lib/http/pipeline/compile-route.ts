import { compileArgument, gather, type Extractor, type ReadingOptions } from './arguments';
import { type Ctx, isThenable } from '../request/ctx';
import { baseStatus, compileEncoder, undeclared } from './encode-answer';
import type { RouteRecord } from '../route/route-record';
import { templateNames } from '../core/router';
import type {
  Around,
  AroundFactory,
  Encoder,
  EncoderExtensions,
  Services,
} from '../route/extensions';

/** A route ready to serve: everything worked out at build, nothing read per request but the request. */
export interface CompiledRoute {
  readonly record: RouteRecord;
  /** Answers one request; returns a promise when anything on the way is asynchronous. */
  readonly run: (c: Ctx) => unknown;
}

export interface CompileOptions {
  readonly encoders: EncoderExtensions;
  readonly arounds: readonly AroundFactory[];
  readonly services: Services;
  /** Bounds on reading arguments (the App's `maxParams`, `maxDepth`). */
  readonly reading?: ReadingOptions;
}

/** The arguments of a handler that takes none: one list for every request (`apply` only reads it). */
const NO_ARGS: unknown[] = [];

export function compileRoute(
  record: RouteRecord,
  instance: object,
  options: CompileOptions,
): CompiledRoute {
  const names = templateNames(record.path);
  const extract: readonly Extractor[] = record.args.map((a) =>
    compileArgument(a, names, options.reading),
  );
  const handler = (instance as Record<string, (...args: unknown[]) => unknown>)[record.key];
  const encode: Encoder = record.contract
    ? compileEncoder(record.contract, record.label, options.encoders)
    : undeclared(record.label);
  const status = record.contract ? baseStatus(record.contract) : 200;

  // An answer written asynchronously (a file, c.sendFile) is a promise: returned, so the pipeline
  // waits for it and its failures reach the route's failure path.
  const answer = (c: Ctx, v: unknown): void | Promise<void> => {
    if (c.answering !== null) return c.answering;
    if (!c.sent) return encode(c, v, status, null);
  };
  const invoke = (c: Ctx, args: unknown[]): unknown => {
    const r = handler.apply(instance, args);
    if (isThenable(r)) return Promise.resolve(r).then((v) => ((c.handled = true), answer(c, v)));
    c.handled = true;
    return answer(c, r);
  };

  let run =
    extract.length === 0 ? (c: Ctx) => invoke(c, NO_ARGS) : (c: Ctx) => gather(c, extract, invoke);
  // Steps around the route run before its arguments are worked out, so a replay or a refusal never
  // pays for reading and validating the body. A route with a step pays one closure per request for
  // `proceed`; the others none.
  const arounds = options.arounds
    .map((f) => f(record, options.services))
    .filter((a): a is Around => a !== null);
  for (const around of arounds.reverse()) {
    const inner = run;
    run = (c) => around(c, () => inner(c));
  }
  return Object.freeze({ record, run });
}
