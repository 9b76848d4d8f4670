import type { StandardSchema } from '../core/standard-schema';
import 'reflect-metadata';
import type { Contract } from '../core/answers';
import type { UploadLimits } from '../request/uploaded-file';
import { RouteMarks, type MarkKey } from './mark-key';

// Keys are private symbols of this module: no other package can read or clash with them.
const CONTROLLER = Symbol('fw.controller');
const ROUTES = Symbol('fw.routes');
const PARAMS = Symbol('fw.params');
const RETURNS = Symbol('fw.returns');
// `@Inject(key)` on constructor parameters: index → key, on the class.
const CTOR_KEYS = Symbol('fw.ctorKeys');
// Every capability's mark of a method, in one map per method keyed by the capability's MarkKey.
const MARKS = Symbol('fw.marks');

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface RouteMark {
  readonly method: HttpMethod;
  readonly path: string;
  readonly key: string;
  readonly operationId?: string;
  readonly summary?: string;
}

export type ParamMark =
  | { readonly index: number; readonly kind: 'body'; readonly schema?: StandardSchema | undefined }
  | {
      readonly index: number;
      readonly kind: 'query';
      readonly name?: string | undefined;
      readonly schema?: StandardSchema | undefined;
    }
  | { readonly index: number; readonly kind: 'param'; readonly name: string }
  | { readonly index: number; readonly kind: 'header'; readonly name: string }
  | { readonly index: number; readonly kind: 'authorization'; readonly scheme: 'bearer' | 'basic' }
  | {
      readonly index: number;
      readonly kind: 'form';
      readonly bound?: Function | undefined;
      readonly limits?: Partial<UploadLimits> | undefined;
    }
  | { readonly index: number; readonly kind: 'session' }
  | { readonly index: number; readonly kind: 'inject'; readonly key: unknown };

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
  /** Leaves a capability's mark on a method; a second mark under the same key replaces the first. */
  setMark<T>(proto: Proto, key: string, markKey: MarkKey<T>, mark: T): void {
    const map: ReadonlyMap<MarkKey<unknown>, unknown> = Reflect.getOwnMetadata(MARKS, proto, key) ??
    new Map();
    Reflect.defineMetadata(MARKS, new Map([...map, [markKey, mark]]), proto, key);
  },
  /** Every capability's mark of a method. */
  marksOf(proto: Proto, key: string): RouteMarks {
    const map: ReadonlyMap<MarkKey<unknown>, unknown> | undefined = Reflect.getOwnMetadata(
      MARKS,
      proto,
      key,
    );
    return map === undefined ? RouteMarks.NONE : new RouteMarks(map);
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
  addCtorKey(target: Function, index: number, key: unknown): void {
    const keys: ReadonlyMap<number, unknown> =
      Reflect.getOwnMetadata(CTOR_KEYS, target) ?? new Map();
    Reflect.defineMetadata(CTOR_KEYS, new Map([...keys, [index, key]]), target);
  },
  /** The `@Inject` keys of a class's constructor parameters, by index. */
  ctorKeys(target: Function): ReadonlyMap<number, unknown> {
    return Reflect.getOwnMetadata(CTOR_KEYS, target) ?? new Map();
  },
};
