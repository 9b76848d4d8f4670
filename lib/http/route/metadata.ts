import 'reflect-metadata';
import type { Contract } from '../core/answers';
import type { Ctx } from '../request/ctx';

// Keys are private symbols of this module: no other package can read or clash with them.
const CONTROLLER = Symbol('fw.controller');
const ROUTES = Symbol('fw.routes');
const PARAMS = Symbol('fw.params');
const RETURNS = Symbol('fw.returns');
const IDEMPOTENT = Symbol('fw.idempotent');
const UPGRADE = Symbol('fw.upgrade');
const RATE = Symbol('fw.rate');

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface RouteMark {
  readonly method: HttpMethod;
  readonly path: string;
  readonly key: string;
  readonly operationId?: string;
  readonly summary?: string;
}

export type ParamMark =
  | { readonly index: number; readonly kind: 'body' }
  | { readonly index: number; readonly kind: 'query'; readonly name?: string }
  | { readonly index: number; readonly kind: 'param'; readonly name: string }
  | { readonly index: number; readonly kind: 'header'; readonly name: string }
  | { readonly index: number; readonly kind: 'authorization'; readonly scheme: 'bearer' | 'basic' }
  | { readonly index: number; readonly kind: 'form'; readonly bound?: Function }
  | { readonly index: number; readonly kind: 'session' };

export interface IdempotentMark {
  /** The space declaration (from `fw/cache`'s `Space(...)`); the opened space is found among provided services. */
  readonly space: object;
  readonly by?: (c: Ctx) => string | null | undefined | Promise<string | null | undefined>;
}

/**
 * The origins a WebSocket route accepts: a list of exact `Origin` values, or a function deciding
 * (it also gets the request's `Host` and the local port, for services that learn their port at
 * listen). An empty list accepts any origin.
 */
export type OriginRule = readonly string[] | ((origin: string, at: { readonly host: string | null; readonly port: number }) => boolean);

/** What a `@WebSocket` route declares; limits left out take the framework's defaults (`WEBSOCKET_DEFAULTS`). */
export interface UpgradeMark {
  readonly origins: OriginRule;
  readonly maxMessageBytes?: number;
  readonly pingIntervalMs?: number;
  readonly idleTimeoutMs?: number;
}

export interface RateMark {
  readonly max: number;
  readonly perSeconds: number;
  /** Client addresses the route keeps windows for at once (default 100,000); a new address past it is 503. */
  readonly maxAddresses?: number;
}

type Proto = object;

export const marks = {
  setController(target: Function, prefix: string): void {
    Reflect.defineMetadata(CONTROLLER, prefix, target);
  },
  controller(target: Function): string | undefined {
    return Reflect.getOwnMetadata(CONTROLLER, target);
  },
  addRoute(proto: Proto, mark: RouteMark): void {
    const list: RouteMark[] = Reflect.getOwnMetadata(ROUTES, proto) ?? [];
    Reflect.defineMetadata(ROUTES, [...list, mark], proto);
  },
  routes(proto: Proto): readonly RouteMark[] {
    return Reflect.getOwnMetadata(ROUTES, proto) ?? [];
  },
  addParam(proto: Proto, key: string, mark: ParamMark): void {
    const list: ParamMark[] = Reflect.getOwnMetadata(PARAMS, proto, key) ?? [];
    Reflect.defineMetadata(PARAMS, [...list, mark], proto, key);
  },
  params(proto: Proto, key: string): readonly ParamMark[] {
    return Reflect.getOwnMetadata(PARAMS, proto, key) ?? [];
  },
  setReturns(proto: Proto, key: string, contract: Contract): void {
    Reflect.defineMetadata(RETURNS, contract, proto, key);
  },
  returns(proto: Proto, key: string): Contract | undefined {
    return Reflect.getOwnMetadata(RETURNS, proto, key);
  },
  setIdempotent(proto: Proto, key: string, mark: IdempotentMark): void {
    Reflect.defineMetadata(IDEMPOTENT, mark, proto, key);
  },
  idempotent(proto: Proto, key: string): IdempotentMark | undefined {
    return Reflect.getOwnMetadata(IDEMPOTENT, proto, key);
  },
  setUpgrade(proto: Proto, key: string, mark: UpgradeMark): void {
    Reflect.defineMetadata(UPGRADE, mark, proto, key);
  },
  upgrade(proto: Proto, key: string): UpgradeMark | undefined {
    return Reflect.getOwnMetadata(UPGRADE, proto, key);
  },
  setRate(proto: Proto, key: string, mark: RateMark): void {
    Reflect.defineMetadata(RATE, mark, proto, key);
  },
  rate(proto: Proto, key: string): RateMark | undefined {
    return Reflect.getOwnMetadata(RATE, proto, key);
  },
  paramTypes(proto: Proto, key: string): readonly unknown[] {
    return Reflect.getMetadata('design:paramtypes', proto, key) ?? [];
  },
  returnType(proto: Proto, key: string): unknown {
    return Reflect.getMetadata('design:returntype', proto, key);
  },
  ctorTypes(target: Function): readonly unknown[] {
    return Reflect.getMetadata('design:paramtypes', target) ?? [];
  },
};
