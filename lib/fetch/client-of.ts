import { randomUUID } from 'node:crypto';
import { checkLimit } from './client-settings';
import type { Answered, ClientCall, ClientOf, Failed } from './client-types';
import { FetchError } from './errors';
import type { HeaderLine } from './header-line';
import { CLIENT_ATTEMPTS, CLIENT_DEADLINE_MS, isFailureBody, sendRetried } from './keyed-retry';
import type { FetchResponse } from './response';
import type { Scope } from './scope';
import type { OpenTarget } from './target';

/** Where one handler argument goes, as the server's document says (`x-fw-handler`); null: the server fills it. */
type ArgPlace = { readonly in: string; readonly name?: string } | null;

/** The `x-fw-handler` member fw writes on each operation of a program's route. */
interface HandlerExtension {
  readonly controller: string;
  readonly method: string;
  readonly args: readonly ArgPlace[];
  readonly idempotent: boolean;
  readonly answers: readonly number[];
}

/** What `clientOf` reads of an OpenAPI document: its operations (fw's `app.document()` or `/openapi.json`). */
export interface ClientDocument {
  readonly paths: {
    readonly [path: string]: { readonly [method: string]: { readonly [field: string]: unknown } };
  };
}

/** How `clientOf` is set up. */
export interface ClientOfOptions {
  /** The server's OpenAPI document, with its `x-fw-handler` members. */
  readonly document: ClientDocument;
  /** The controller's class name, as the document names it (`OrdersController`). */
  readonly controller: string;
  /** Every call's deadline unless the call gives one. Default the target's client's `timeoutMs`. */
  readonly timeoutMs?: number;
  /** Tries per call unless the call gives its own. Default 5. */
  readonly attempts?: number;
}

interface Operation {
  readonly httpMethod: string;
  readonly path: string;
  readonly label: string;
  readonly handler: HandlerExtension;
}

const CALL_KEYS = new Set([
  'headers',
  'timeoutMs',
  'stallMs',
  'maxBody',
  'tryTimeoutMs',
  'attempts',
  'idempotencyKey',
]);

/**
 * A typed client of one controller over an opened `Target`: a method per handler, taking the scope,
 * the arguments the route reads (in the handler's order, server-filled ones left out) and the
 * call's options, and giving a result told apart by `status`. Idempotent routes get one
 * `Idempotency-Key` per call, kept across the retries. Only the controller's type is needed
 * (`import type`); where each argument goes comes from the document.
 *
 * @example
 * import type { OrdersController } from '../server/orders-controller';
 * const orders = clientOf<OrdersController>(shop, { document, controller: 'OrdersController' });
 * const r = await orders.create(run, { sku: 'apple', qty: 2 });
 * if (r.status === 201) console.log(r.value.id, r.idempotencyKey);
 */
export function clientOf<C>(target: OpenTarget, options: ClientOfOptions): ClientOf<C> {
  checkLimit('clientOf', 'timeoutMs', options.timeoutMs);
  checkLimit('clientOf', 'attempts', options.attempts, 1);
  const ops = operationsOf(options.document, options.controller);
  const client: Record<string, unknown> = {};
  for (const op of ops)
    client[op.handler.method] = (c: Scope, ...args: unknown[]) =>
      invoke({ target, options, op }, c, args);
  return Object.freeze(client) as ClientOf<C>;
}

function operationsOf(document: ClientDocument, controller: string): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {}))
    for (const [method, op] of Object.entries(item)) {
      const handler = op['x-fw-handler'] as HandlerExtension | undefined;
      if (handler?.controller !== controller) continue;
      const httpMethod = method.toUpperCase();
      ops.push({
        httpMethod,
        path,
        label: `${httpMethod} ${path} (${controller}.${handler.method})`,
        handler,
      });
    }
  if (ops.length === 0)
    throw new FetchError(
      'NotInDocument',
      `the document has no operation of ${controller} (x-fw-handler): is it fw's document of the server that serves it?`,
    );
  return ops;
}

/** The request one call makes: path arguments and query, body, headers. */
interface Request {
  readonly args: Record<string, unknown>;
  readonly headers: HeaderLine[];
  body: { readonly json: unknown } | { readonly form: string } | null;
}

async function invoke(
  { target, options, op }: { target: OpenTarget; options: ClientOfOptions; op: Operation },
  c: Scope,
  given: readonly unknown[],
): Promise<Answered<number, unknown> | Failed<never>> {
  const places = op.handler.args.filter((p): p is NonNullable<ArgPlace> => p !== null);
  const call = callOf(op, places.length, given);
  const req = requestOf(places, given);
  const key = op.handler.idempotent ? (call.idempotencyKey ?? randomUUID()) : null;
  if (key !== null) req.headers.push({ name: 'Idempotency-Key', value: key });
  const headers = [...(call.headers ?? []), ...req.headers];
  const plan = {
    scope: c,
    replayable: key !== null || op.httpMethod === 'GET' || op.httpMethod === 'HEAD',
    attempts: call.attempts ?? options.attempts ?? CLIENT_ATTEMPTS,
    deadlineMs:
      (call.timeoutMs ?? options.timeoutMs ?? target.client.settings.timeoutMs) ||
      CLIENT_DEADLINE_MS,
    tryTimeoutMs: call.tryTimeoutMs ?? null,
    answers: new Set(op.handler.answers),
  };
  const { res, attempts } = await sendRetried(plan, (timeoutMs) => {
    const each = { ...callLimits(call), headers, timeoutMs };
    const body = req.body;
    if (body === null) return target.send(c, op.httpMethod, op.path, req.args as never, null, each);
    if ('json' in body)
      return target.sendJson(
        c,
        op.httpMethod,
        op.path,
        req.args as never,
        body.json as object,
        each,
      );
    const form = [...headers, { name: 'Content-Type', value: 'application/x-www-form-urlencoded' }];
    return target.send(c, op.httpMethod, op.path, req.args as never, body.form, {
      ...each,
      headers: form,
    });
  });
  return resultOf(res, plan.answers, key, attempts);
}

/** The call's options: the argument after the route's own, if any; more than that is refused. */
function callOf(op: Operation, wanted: number, given: readonly unknown[]): ClientCall {
  if (given.length > wanted + 1)
    throw new FetchError(
      'BadArguments',
      `${op.label} reads ${wanted} argument(s), got ${given.length}: does a server-filled parameter's type lack the SERVER_SIDE brand?`,
    );
  if (given.length <= wanted) return {};
  const call = given[wanted];
  if (call === undefined) return {};
  const unknown =
    typeof call === 'object' && call !== null
      ? Object.keys(call).filter((k) => !CALL_KEYS.has(k))
      : ['(not an object)'];
  if (unknown.length > 0)
    throw new FetchError(
      'BadArguments',
      `${op.label}: the argument after the route's ${wanted} is the call's options, which have no ${unknown.join(', ')}`,
    );
  checkLimit(op.label, 'tryTimeoutMs', (call as ClientCall).tryTimeoutMs, 1);
  checkLimit(op.label, 'attempts', (call as ClientCall).attempts, 1);
  return call as ClientCall;
}

function callLimits(call: ClientCall): { stallMs?: number; maxBody?: number } {
  const out: { stallMs?: number; maxBody?: number } = {};
  if (call.stallMs !== undefined) out.stallMs = call.stallMs;
  if (call.maxBody !== undefined) out.maxBody = call.maxBody;
  return out;
}

function requestOf(places: readonly NonNullable<ArgPlace>[], given: readonly unknown[]): Request {
  const req: Request = { args: {}, headers: [], body: null };
  places.forEach((place, i) => {
    const value = given[i];
    if (place.in === 'body') req.body = { json: value ?? null };
    else if (place.in === 'form') req.body = { form: formText(value) };
    else if (value === undefined || value === null) return;
    else if (place.in === 'header') req.headers.push({ name: place.name!, value: String(value) });
    else if (place.name !== undefined) req.args[place.name] = value;
    else for (const [k, v] of Object.entries(value as object)) if (v !== undefined) req.args[k] = v;
  });
  return req;
}

function formText(value: unknown): string {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries((value ?? {}) as object))
    if (v !== undefined && v !== null) form.append(k, String(v));
  return form.toString();
}

function resultOf(
  res: FetchResponse,
  answers: ReadonlySet<number>,
  key: string | null,
  attempts: number,
): Answered<number, unknown> | Failed<never> {
  const base = { idempotencyKey: key, attempts, response: res };
  const declared =
    answers.has(res.status) && ((res.status >= 200 && res.status < 300) || !isFailureBody(res));
  if (declared) return { status: res.status, value: valueOf(res), failure: null, ...base };
  const body = readBody(res);
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const error = [b.error, b.detail, b.title].find((x) => typeof x === 'string') as
    string | undefined;
  const failure = {
    code: typeof b.code === 'string' ? b.code : null,
    error: error ?? res.body,
    body,
  };
  return { status: res.status as Failed<never>['status'], value: undefined, failure, ...base };
}

function valueOf(res: FetchResponse): unknown {
  if (res.status === 204 || res.status === 304 || res.bytes.length === 0) return undefined;
  const type = res.header('content-type') ?? '';
  if (type.includes('json')) return res.json();
  if (type.startsWith('application/octet-stream')) return res.bytes;
  return res.body;
}

function readBody(res: FetchResponse): unknown {
  try {
    return res.json();
  } catch {
    return res.body;
  }
}
