import type { StandardSchema } from '../core/standard-schema';
import { toContract, type Contract, type ContractLike } from '../core/answers';
import { RouteMarks } from './mark-key';
import type { HttpMethod } from './metadata';
import type { DeclaredFile } from './upload-decorators';
import type { UploadLimits } from '../request/uploaded-file';

/** One handler argument, as the scanner read it. */
export type ArgRecord =
  | { readonly kind: 'body'; readonly type: Function; readonly schema?: StandardSchema }
  | {
      readonly kind: 'form';
      readonly type: Function;
      readonly bound: boolean;
      /** Its `@FormFile()` fields: none for a plain urlencoded form. */
      readonly files: readonly DeclaredFile[];
      /** The route's own upload limits (`@Form({ maxFiles })`), or null. */
      readonly limits: Partial<UploadLimits> | null;
    }
  | { readonly kind: 'queryClass'; readonly type: Function }
  | { readonly kind: 'querySchema'; readonly schema: StandardSchema }
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
  /** Each capability's mark, read through its key: `record.marks.get(IDEMPOTENT)`. */
  readonly marks: RouteMarks;
  /** True for routes the framework adds (health, openapi.json, docs). */
  readonly builtIn: boolean;
  /** Failure statuses the route gives beyond what its arguments and contract imply (for the API description). */
  readonly failures?: readonly number[];
}

/** What a built-in route is made of; the rest of its record follows from these. */
export interface BuiltInRoute {
  readonly method?: HttpMethod;
  readonly path: string;
  /** Its `operationId`, and how its label names it: `GET /healthz (health)`. */
  readonly name: string;
  /** The class serving it, and the method of the instance given to `addBuiltIn` that answers. */
  readonly controller: Function;
  readonly key: string;
  /** What it answers, as `@Returns` takes it: a class, `Status(201, T)`, `String`, `Bytes` … */
  readonly contract: ContractLike;
  readonly returnType?: unknown;
  readonly args?: readonly ArgRecord[];
  readonly summary?: string;
  readonly tag: string;
  readonly failures?: readonly number[];
}

/**
 * The record of a route the framework adds (health, openapi.json, the docs page): GET unless told,
 * marked by no capability.
 */
export function builtInRecord(route: BuiltInRoute): RouteRecord {
  const method = route.method ?? 'GET';
  return Object.freeze({
    method,
    path: route.path,
    label: `${method} ${route.path} (${route.name})`,
    controller: route.controller,
    key: route.key,
    operationId: route.name,
    summary: route.summary,
    tag: route.tag,
    args: Object.freeze([...(route.args ?? [])]),
    contract: toContract(route.contract),
    returnType: route.returnType,
    marks: RouteMarks.NONE,
    builtIn: true,
    ...(route.failures === undefined ? {} : { failures: Object.freeze([...route.failures]) }),
  });
}
