import type { Contract } from '../core/answers';
import type { HttpMethod, IdempotentMark, RateMark, UpgradeMark } from './metadata';

/** One handler argument, as the scanner read it. */
export type ArgRecord =
  | { readonly kind: 'body'; readonly type: Function }
  | { readonly kind: 'form'; readonly type: Function; readonly bound: boolean }
  | { readonly kind: 'queryClass'; readonly type: Function }
  | { readonly kind: 'query'; readonly name: string; readonly type: unknown }
  | { readonly kind: 'param'; readonly name: string; readonly type: unknown }
  | { readonly kind: 'header'; readonly name: string; readonly type: unknown }
  | { readonly kind: 'authorization'; readonly scheme: 'bearer' | 'basic' }
  | { readonly kind: 'ctx' }
  | { readonly kind: 'resolved'; readonly type: Function }
  | { readonly kind: 'service'; readonly type: Function; readonly instance: unknown };

/**
 * Everything known about one route after the scan: what serves requests and what the OpenAPI
 * document describes are both built from this frozen record, so they cannot drift apart.
 */
export interface RouteRecord {
  readonly method: HttpMethod;
  /** The full path template, `{name}` segments included. */
  readonly path: string;
  /** `POST /orders (OrdersController.create)`: how Refusals and 500s name the route. */
  readonly label: string;
  readonly controller: Function;
  readonly key: string;
  readonly operationId: string;
  readonly summary: string | undefined;
  readonly tag: string;
  readonly args: readonly ArgRecord[];
  /** The declared return contract, or null when the route has no `@Returns`. */
  readonly contract: Contract | null;
  /** TypeScript's `design:returntype` (String, undefined for void, Promise …). */
  readonly returnType: unknown;
  readonly idempotent: IdempotentMark | null;
  readonly upgrade: UpgradeMark | null;
  readonly rate: RateMark | null;
  /** True for routes the framework adds (health, openapi.json, docs). */
  readonly builtIn: boolean;
  /** Failure statuses the route gives beyond what its arguments and contract imply (for the API description). */
  readonly failures?: readonly number[];
}
