import { compileArgument, compileGather, type Extractor, type ReadingOptions } from './arguments';
import { type Ctx, type RouteInfo } from '../request/ctx';
import { isThenable } from '../core/thenable';
import { baseStatus, compileEncoder, undeclared, type DroppedField } from './encode-answer';
import type { RouteRecord } from '../route/route-record';
import { templateNames } from '../core/router';
import { uploadPlanOf } from './upload-form';
import type { UploadPlan } from '../request/read-upload';
import { BODY_LIMIT } from '../route/upload-decorators';
import { bodyLimitOf } from '../request/read-body';
import type {
  Around,
  AroundFactory,
  Encoder,
  EncoderExtensions,
  Services,
} from '../route/extensions';
import { exchangeOf } from '../request/exchange-of';
import type { Exchange } from '../request/exchange';

/** A route ready to serve: everything worked out at build, nothing read per request but the request. */
export interface CompiledRoute {
  readonly record: RouteRecord;
  /** What middleware sees of the route in `c.route`. */
  readonly info: RouteInfo;
  /** Answers one request; returns a promise when anything on the way is asynchronous. */
  readonly run: (c: Ctx) => unknown;
}

export interface CompileOptions {
  readonly encoders: EncoderExtensions;
  readonly arounds: readonly AroundFactory[];
  readonly services: Services;
  /** Bounds on reading arguments (the App's `maxParams`, `maxDepth`). */
  readonly reading?: ReadingOptions;
  /** Told each undeclared field an answer leaves out, once per route and field; null: not looked for. */
  readonly dropped?: DroppedField | null;
}

/** The arguments of a handler that takes none: one list for every request (`apply` only reads it). */
const NO_ARGS: unknown[] = [];

export function compileRoute(
  record: RouteRecord,
  instance: object,
  options: CompileOptions,
): CompiledRoute {
  const names = templateNames(record.path);
  const upload = uploadPlanOf(record, options.reading?.uploads);
  const extract: readonly Extractor[] = record.args.map((a) =>
    compileArgument(a, names, options.reading, a.kind === 'form' ? upload : null),
  );
  // The scanner made the record from this very method: it is there.
  const handler = (instance as Record<string, (...args: unknown[]) => unknown>)[record.key]!;
  const encode: Encoder = record.contract
    ? compileEncoder(record.contract, record.label, options.encoders, options.dropped ?? null)
    : undeclared(record.label);
  const status = record.contract ? baseStatus(record.contract) : 200;

  // An answer written asynchronously (a file, c.sendFile) is a promise: returned, so the pipeline
  // waits for it and its failures reach the route's failure path.
  const answer = (c: Ctx, x: Exchange, v: unknown): void | Promise<void> => {
    if (x.answering !== null) return x.answering;
    if (x.status === 0) return encode(c, v, status, null);
  };
  const invoke = (c: Ctx, args: unknown[]): unknown => {
    const x = exchangeOf(c);
    x.invoked = true;
    const r = handler.apply(instance, args);
    if (isThenable(r)) return Promise.resolve(r).then((v) => ((x.handled = true), answer(c, x, v)));
    x.handled = true;
    return answer(c, x, r);
  };

  const run = withSteps(
    extract.length === 0 ? (c: Ctx) => invoke(c, NO_ARGS) : compileGather(extract, invoke),
    record,
    options,
    upload,
  );
  const info: RouteInfo = Object.freeze({
    template: record.path,
    httpMethod: record.method,
    controller: record.builtIn ? record.operationId : record.controller.name,
    method: record.key,
    label: record.label,
    marks: record.marks,
  });
  return Object.freeze({ record, info, run });
}

type Run = (c: Ctx) => unknown;

/**
 * `run` inside the route's steps (`options.arounds`), and inside the setting of its body limit and
 * upload plan. Steps run before the arguments are worked out, so a replay or a refusal never pays
 * for reading and validating the body. A route with a step pays one closure per request for
 * `proceed`; the others none.
 */
function withSteps(
  run: Run,
  record: RouteRecord,
  options: CompileOptions,
  upload: UploadPlan | null,
): Run {
  const arounds = options.arounds
    .map((f) => f(record, options.services))
    .filter((a): a is Around => a !== null);
  for (const around of arounds.reverse()) {
    const inner = run;
    run = (c) => around(c, () => inner(c));
  }
  const limit = record.marks.get(BODY_LIMIT);
  const bodyLimit = limit === undefined ? null : bodyLimitOf(limit, `${record.label}: @BodyLimit`);
  // Set before the steps: the idempotency step reads the body (or the upload) with them.
  if (bodyLimit === null && upload === null) return run;
  const inner = run;
  return (c) => {
    const x = exchangeOf(c);
    if (bodyLimit !== null) x.bodyLimit = bodyLimit;
    x.uploadPlan = upload;
    return inner(c);
  };
}
