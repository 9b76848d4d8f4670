import { toContract, type ContractLike } from '../core/answers';
import { marks, type HttpMethod, type IdempotentMark, type OriginRule, type RateMark } from './metadata';

// Decorators only record. The bootstrap scanner reads what they wrote once, at build().

/** Marks a class as a controller; every route path is put under `prefix`. @example @Controller('/orders') */
export function Controller(prefix = ''): ClassDecorator {
  return (target) => marks.setController(target, prefix);
}

export interface RouteOptions {
  /** The OpenAPI `operationId`; `Controller.method` when not given. */
  readonly operationId?: string;
  readonly summary?: string;
}

const route = (method: HttpMethod) => (path = '', options: RouteOptions = {}): MethodDecorator =>
  (proto, key) => marks.addRoute(proto, { method, path, key: String(key), ...options });

/** @example @Get('/{id}') find(@Param('id') id: number) */
export const Get = route('GET');
export const Post = route('POST');
export const Put = route('PUT');
export const Patch = route('PATCH');
export const Delete = route('DELETE');
export const Head = route('HEAD');
export const Options = route('OPTIONS');

export interface WebSocketOptions extends RouteOptions {
  /** Exact `Origin` values, or a function deciding; none named accepts any origin (and none). */
  readonly origins?: OriginRule;
  /** The largest message a peer may send, fragments put together; past it the socket closes with 1009. Default 1 MiB. */
  readonly maxMessageBytes?: number;
  /** A ping goes out this often; a peer that has not answered one when the next is due is cut. Default 30 s; 0 sends none. */
  readonly pingIntervalMs?: number;
  /** A socket with no message either way for this long is closed with 1001 `idle timeout`. Default 5 min; 0 never. */
  readonly idleTimeoutMs?: number;
}

/**
 * A WebSocket route: a GET whose handler calls `c.upgrade(loop, state)`. A handshake whose `Origin`
 * is not named gets 403 (a missing one too, when origins are named); a request that is not a valid
 * WebSocket upgrade gets 400. The framework owns the socket's errors and limits: a peer breaking
 * the protocol is closed (1002, 1007, 1009) and logged, never an uncaught error.
 * @example @WebSocket('/ws/echo', { origins: ['https://shop.example'], maxMessageBytes: 64 * 1024 }) echo(c: Ctx) { c.upgrade(echoLoop, null) }
 */
export function WebSocket(path = '', options: WebSocketOptions = {}): MethodDecorator {
  const { origins = [], maxMessageBytes, pingIntervalMs, idleTimeoutMs, ...rest } = options;
  return (proto, key) => {
    marks.addRoute(proto, { method: 'GET', path, key: String(key), ...rest });
    marks.setUpgrade(proto, String(key), { origins, maxMessageBytes, pingIntervalMs, idleTimeoutMs });
  };
}

/** Declares what the route answers: status, content type and OpenAPI response. @example @Returns(Status(201, Order)) */
export function Returns(contract: ContractLike): MethodDecorator {
  return (proto, key) => marks.setReturns(proto, String(key), toContract(contract));
}

/**
 * Runs the handler once per `Idempotency-Key` (and caller) and replays the kept answer to retries.
 * @example @Idempotent(Orders, { by: (c) => c.resolve(Account).id })
 */
export function Idempotent(space: object, options: Omit<IdempotentMark, 'space'> = {}): MethodDecorator {
  return (proto, key) => marks.setIdempotent(proto, String(key), { space, ...options });
}

/**
 * Allows at most `max` requests per `perSeconds` per client address (429 with `Retry-After` beyond).
 * Windows are kept for at most `maxAddresses` addresses at once (default 100,000): a new address
 * past it is 503 with `Retry-After` until the oldest window ends.
 */
export function RateLimit(options: RateMark): MethodDecorator {
  return (proto, key) => marks.setRate(proto, String(key), options);
}

const param = (build: (index: number) => Parameters<typeof marks.addParam>[2]): ParameterDecorator =>
  (proto, key, index) => marks.addParam(proto, String(key), build(index));

/** The JSON request body, read into the parameter's class and validated with its class-validator decorators. */
export const Body = (): ParameterDecorator => param((index) => ({ index, kind: 'body' }));
/**
 * An `application/x-www-form-urlencoded` body read into the parameter's class (400 when it does not
 * fit). `@Form(T) b: Bound<T>` gives the reading itself, so the handler can answer 422 with `b.fail()`.
 */
export const Form = (bound?: Function): ParameterDecorator => param((index) => ({ index, kind: 'form', bound }));
/** `@Query()` reads the query string into the parameter's class; `@Query('qty')` reads one value, converted to the parameter's type. */
export const Query = (name?: string): ParameterDecorator => param((index) => ({ index, kind: 'query', name }));
/** A `{name}` path segment, converted to the parameter's type (number, boolean or string). */
export const Param = (name: string): ParameterDecorator => param((index) => ({ index, kind: 'param', name }));
/** A request header's value, or `null` when absent. */
export const Header = (name: string): ParameterDecorator => param((index) => ({ index, kind: 'header', name: name.toLowerCase() }));
/** The parsed `Authorization` header; 401 with `WWW-Authenticate` when it is missing or not of this scheme. */
export const Authorization = (scheme: 'bearer' | 'basic'): ParameterDecorator => param((index) => ({ index, kind: 'authorization', scheme }));
