import type { StandardSchema } from '../core/standard-schema';
import {
  toContract,
  type AnswerOf,
  type AtMost8Headers,
  type ContractLike,
  type HeaderList,
  type TooManyHeaders,
} from '../core/answers';
import type { EventStream } from '../request/events';
import type { UploadLimits } from '../request/uploaded-file';
import type { MarkKey } from './mark-key';
import { marks, type HttpMethod } from './metadata';

// Decorators only record. The bootstrap scanner reads what they wrote once, at build(). A
// capability's own decorator (`@Idempotent`, `@RateLimit`, `@WebSocketRoute`) lives with its capability
// and records through `markRoute` under the capability's key.

/** Marks a class as a controller; every route path is put under `prefix`. @example @Controller('/orders') */
export function Controller(prefix = ''): ClassDecorator {
  return (target) => marks.setController(target, prefix);
}

export interface RouteOptions {
  /** The OpenAPI `operationId`; `Controller.method` when not given. */
  readonly operationId?: string;
  readonly summary?: string;
}

const route =
  (method: HttpMethod) =>
  (path = '', options: RouteOptions = {}): MethodDecorator =>
  (proto, key) =>
    marks.addRoute(proto, { method, path, key: String(key), ...options });

/** @example @Get('/{id}') find(@Param('id') id: number) */
export const Get = route('GET');
export const Post = route('POST');
export const Put = route('PUT');
export const Patch = route('PATCH');
export const Delete = route('DELETE');
export const Head = route('HEAD');
export const Options = route('OPTIONS');

/** What a handler under `@Returns(C)` returns: `AnswerOf<C>`, nothing for an `EventStream` (it answers through `c.events()`). */
export type HandlerAnswer<C> = C extends typeof EventStream ? void : AnswerOf<C>;

/** A handler returning `R`, at once or through a promise. */
export type HandlerReturning<R> = (...args: never[]) => R | Promise<R>;

/** The headers of a `{ status, value, headers }` a handler returns, when they are a literal object. */
type LiteralHeaders<R> = R extends { readonly status: number; readonly headers?: infer H }
  ? H extends HeaderList
    ? never
    : H
  : never;
/**
 * A ninth header in a returned literal `{ status, value, headers: {…} }` (eight is the most); `any`
 * holds to nothing.
 */
type Overfull<R> = 0 extends 1 & R
  ? false
  : true extends OverfullEach<LiteralHeaders<R>>
    ? true
    : false;
type OverfullEach<H> = H extends unknown
  ? AtMost8Headers<H> extends TooManyHeaders
    ? true
    : false
  : never;

/**
 * Declares what the route answers: status, content type and OpenAPI response. The handler must
 * return what the contract says (`Order` for `Status(201, Order)`, `reply(409, x)` for a `Reply`
 * map, `Redirect.to(url)` for a `Redirect`): anything else is a type error at the handler.
 * @example @Returns(Status(201, Order)) place(@Body() o: NewOrder): Promise<Order>
 */
export function Returns<const C extends ContractLike>(
  contract: C,
): <M extends HandlerReturning<HandlerAnswer<C>>>(
  proto: object,
  key: string | symbol,
  handler: Overfull<Awaited<ReturnType<M>>> extends true
    ? TooManyHeaders
    : { readonly value?: M | undefined },
) => void {
  return (proto, key) => marks.setReturns(proto, String(key), toContract(contract));
}

/**
 * A method decorator leaving a capability's mark on the route, read back from its record with
 * `record.marks.get(key)`.
 * @example export const RateLimit = (options: RateMark): MethodDecorator => markRoute(RATE, options);
 */
export function markRoute<T>(key: MarkKey<T>, mark: T): MethodDecorator {
  return (proto, method) => marks.setMark(proto, String(method), key, mark);
}

const param =
  (build: (index: number) => Parameters<typeof marks.addParam>[2]): ParameterDecorator =>
  (proto, key, index) =>
    marks.addParam(proto, String(key), build(index));

/**
 * The JSON request body, read into the parameter's class and validated with its class-validator
 * decorators; or, given a Standard Schema (zod 4, valibot, arktype), validated by it and typed
 * `Infer<typeof schema>`.
 * @example create(@Body(NewOrder) o: Infer<typeof NewOrder>) { … }   // const NewOrder = z.object({ … })
 */
export const Body = (schema?: StandardSchema): ParameterDecorator =>
  param((index) => ({ index, kind: 'body', schema }));
/**
 * An `application/x-www-form-urlencoded` body read into the parameter's class (400 when it does not
 * fit). `@Form(T) b: Bound<T>` gives the reading itself, so the handler can answer 422 with `b.fail()`.
 * A class with `@FormFile()` fields is also read from `multipart/form-data`, its files streamed to temp
 * files; `limits` override the app's `uploads` for this route.
 * @example save(@Form() form: Avatar) · @Form({ maxFiles: 3 }) · @Form(Signup) b: Bound<Signup>
 */
export function Form(
  bound?: Function | Partial<UploadLimits>,
  limits?: Partial<UploadLimits>,
): ParameterDecorator {
  const cls = typeof bound === 'function' ? bound : undefined;
  const own = typeof bound === 'function' ? limits : (bound ?? limits);
  return param((index) => ({ index, kind: 'form', bound: cls, limits: own }));
}
/**
 * `@Query()` reads the query string into the parameter's class; `@Query('qty')` reads one value,
 * converted to the parameter's type. Given a Standard Schema, the whole query is validated by it
 * and typed `Infer<typeof schema>`: each value is converted first as the schema's
 * JSON Schema types it (integer, number, boolean, arrays of those), so `z.number()` reads `?qty=3`.
 * @example list(@Query(Search) q: Infer<typeof Search>)   // const Search = z.object({ q: z.string() })
 */
export const Query = (name?: string | StandardSchema): ParameterDecorator =>
  param((index) =>
    typeof name === 'string' || name === undefined
      ? { index, kind: 'query', name }
      : { index, kind: 'query', schema: name },
  );
/** A `{name}` path segment, converted to the parameter's type (number, boolean or string). */
export const Param = (name: string): ParameterDecorator =>
  param((index) => ({ index, kind: 'param', name }));
/** A request header's value, or `null` when absent. */
export const Header = (name: string): ParameterDecorator =>
  param((index) => ({ index, kind: 'header', name: name.toLowerCase() }));
/**
 * Fills a constructor or handler parameter with the instance provided under `key`
 * (`app.provide(instance, { as: key })`) rather than by its type: how a controller takes two
 * instances of one class, such as two opened targets. `key` is any object: the target's or
 * space's declaration, a class, or a value of your own.
 * @example constructor(@Inject(Bank) readonly bank: OpenTarget, @Inject(Fraud) readonly fraud: OpenTarget) {}
 */
export const Inject =
  (key: object): ParameterDecorator =>
  (target, method, index) => {
    if (method === undefined) marks.addCtorKey(target as Function, index, key);
    else marks.addParam(target, String(method), { index, kind: 'inject', key });
  };
/** The parsed `Authorization` header; 401 with `WWW-Authenticate` when it is missing or not of this scheme. */
export const Authorization = (scheme: 'bearer' | 'basic'): ParameterDecorator =>
  param((index) => ({ index, kind: 'authorization', scheme }));
