import { randomUUID } from 'node:crypto';
import { checkLimit } from './client-settings';
import type { Answered, ClientCall, ClientOf, Failed } from './client-types';
import { FetchError } from './errors';
import type { HeaderLine } from './header-line';
import { CLIENT_ATTEMPTS, CLIENT_DEADLINE_MS, isFailureBody, sendRetried } from './keyed-retry';
import { eventItems } from './event-items';
import { Exchange } from './exchange';
import type { ResponseHead } from './head';
import { FetchResponse } from './response';
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
  /** A typed event stream (its 200 is `text/event-stream` whose items carry JSON data), or null. */
  readonly stream: { readonly ids: boolean } | null;
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
 * (`import type`); where each argument goes comes from the document. A typed event stream's
 * (`EventStream.of(T)`) 200 carries the events as an async iterable of `T`, read as they arrive
 * (one try; `break` closes the connection): `for await (const tick of r.value) …`.
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
      op.stream === null
        ? invoke({ target, options, op }, c, args)
        : invokeStream({ target, options, op }, c, args);
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
        stream: streamOf(op),
      });
    }
  if (ops.length === 0)
    throw new FetchError(
      'NotInDocument',
      `the document has no operation of ${controller} (x-fw-handler): is it fw's document of the server that serves it?`,
    );
  return ops;
}

/** A typed event stream as the document declares it (OpenAPI 3.2 `itemSchema`), or null. */
function streamOf(op: { readonly [field: string]: unknown }): { ids: boolean } | null {
  type Item = { required?: unknown; properties?: { data?: { contentMediaType?: unknown } } };
  const responses = op.responses as
    Record<string, { content?: Record<string, { itemSchema?: Item }> }> | undefined;
  const item = responses?.['200']?.content?.['text/event-stream']?.itemSchema;
  if (item?.properties?.data?.contentMediaType !== 'application/json') return null;
  return { ids: Array.isArray(item.required) && item.required.includes('id') };
}

/** The request one call makes: path arguments and query, body, headers. */
interface Request {
  readonly args: Record<string, unknown>;
  readonly headers: HeaderLine[];
  body: { readonly json: unknown } | { readonly form: string } | null;
}

/** What a call's positional arguments say: its options (`Call`), and the request they build. */
function callAndRequest(op: Operation, given: readonly unknown[]) {
  const places = op.handler.args.filter((p): p is NonNullable<ArgPlace> => p !== null);
  return { call: callOf(op, places.length, given), req: requestOf(places, given) };
}

async function invoke(
  { target, options, op }: { target: OpenTarget; options: ClientOfOptions; op: Operation },
  c: Scope,
  given: readonly unknown[],
): Promise<Answered<number, unknown> | Failed<never>> {
  const { call, req } = callAndRequest(op, given);
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

/**
 * A typed event stream: one try (events already read are not read again). A 200's value is the
 * events as they arrive, each one's data read as JSON; any other answer is read whole, as for
 * another call. The call's deadline is none unless given (a stream may last); `stallMs` bounds a
 * quiet stream and `maxBody` one event.
 */
async function invokeStream(
  { target, options, op }: { target: OpenTarget; options: ClientOfOptions; op: Operation },
  c: Scope,
  given: readonly unknown[],
): Promise<Answered<number, unknown> | Failed<never>> {
  const { call, req } = callAndRequest(op, given);
  const ex = new Exchange();
  const head = await target.begin(c, ex, {
    method: op.httpMethod,
    path: op.path,
    args: req.args,
    headers: [...(call.headers ?? []), ...req.headers],
    timeoutMs: call.timeoutMs ?? options.timeoutMs ?? 0,
    ...(call.stallMs === undefined ? {} : { stallMs: call.stallMs }),
  });
  const maxBody = call.maxBody ?? target.client.settings.maxBody;
  if (head.status !== 200) {
    let text: string;
    try {
      text = await ex.take(c, maxBody);
    } finally {
      await ex.end();
    }
    return resultOf(responseOf(head, Buffer.from(text)), new Set(op.handler.answers), null, 1);
  }
  return {
    status: 200,
    value: eventItems(ex, { ids: op.stream!.ids, maxEventBytes: maxBody }),
    failure: null,
    idempotencyKey: null,
    attempts: 1,
    response: responseOf(head, Buffer.alloc(0)),
  };
}

/** A head and the bytes read after it, as the `FetchResponse` a result carries. */
function responseOf(head: ResponseHead, bytes: Buffer): FetchResponse {
  const rawHeaders: Buffer[] = [];
  const headers: Record<string, string | string[]> = {};
  for (const { name, value } of head.headers) {
    rawHeaders.push(Buffer.from(name, 'latin1'), Buffer.from(value, 'latin1'));
    const key = name.toLowerCase();
    const prior = headers[key];
    headers[key] =
      prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  }
  return new FetchResponse({
    status: head.status,
    rawHeaders,
    headers,
    bytes,
    redirected: head.redirected,
  });
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
