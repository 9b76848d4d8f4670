import { markRoute } from '../route/decorators';
import { MarkKey } from '../route/mark-key';
import type { Capability, OperationSink } from '../route/extensions';
import type { RouteRecord } from '../route/route-record';

/** Failure statuses, each with the codes it may carry (none: any code). */
export type DeclaredFailures = ReadonlyMap<number, readonly string[]>;

/** A status (`409`), or statuses with their codes (`{ 422: ['InsufficientFunds'] }`). */
export type FailsEntry = number | Readonly<Record<number, readonly string[]>>;

const FAILS = new MarkKey<DeclaredFailures>('fails');
// Controller-wide declarations, keyed by the class (no registry to reset: it goes with the class).
const byController = new WeakMap<Function, DeclaredFailures>();

/**
 * Declares failures a route (or every route of a controller) can answer beyond those fw works out
 * itself, with the codes each may carry, for the OpenAPI document. Records only: what
 * is thrown is still up to the handler.
 * @example @Post() @Fails(403, { 422: ['InsufficientFunds', 'AccountFrozen'] }) transfer(...) { … }
 * @example @Controller('/accounts') @Fails(403) class AccountsController { … }
 */
export function Fails(...entries: FailsEntry[]): MethodDecorator & ClassDecorator {
  const declared = read(entries);
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key === undefined)
      byController.set(target as Function, merge(byController.get(target as Function), declared));
    else markRoute(FAILS, declared)(target, key, descriptor!);
  }) as MethodDecorator & ClassDecorator;
}

function read(entries: readonly FailsEntry[]): DeclaredFailures {
  const out = new Map<number, string[]>();
  const add = (status: number, codes: readonly string[]) => {
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw new TypeError(`@Fails: ${String(status)} is not a failure status (400–599)`);
    const list = out.get(status) ?? [];
    for (const c of codes) if (!list.includes(c)) list.push(c);
    out.set(status, list);
  };
  for (const e of entries) {
    if (typeof e === 'number') add(e, []);
    else for (const [s, codes] of Object.entries(e)) add(Number(s), codes);
  }
  return out;
}

function merge(a: DeclaredFailures | undefined, b: DeclaredFailures): DeclaredFailures {
  if (a === undefined) return b;
  const out = new Map(a);
  for (const [s, codes] of b) out.set(s, [...new Set([...(out.get(s) ?? []), ...codes])]);
  return out;
}

/**
 * What a resolved class says it can throw: `static failures = [401, 403]`, or with codes
 * `static failures = { 403: ['NotOwner'] }`.
 */
export function resolverFailures(type: Function): DeclaredFailures {
  const said = (type as { failures?: unknown }).failures;
  if (said === undefined) return new Map();
  if (Array.isArray(said)) return read(said as FailsEntry[]);
  if (typeof said === 'object' && said !== null) return read([said as Record<number, string[]>]);
  throw new TypeError(`${type.name}.failures must be a list of statuses or { status: codes }`);
}

function describe(record: RouteRecord, op: OperationSink): void {
  const all = [
    byController.get(record.controller),
    record.marks.get(FAILS),
    ...record.args.flatMap((a) => (a.kind === 'resolved' ? [resolverFailures(a.type)] : [])),
  ];
  for (const declared of all) {
    if (declared === undefined) continue;
    for (const [status, codes] of declared) {
      op.failure(status, codes.length > 0 ? codes.join(', ') : undefined);
      if (codes.length > 0) op.codes(status, codes);
    }
  }
}

/** `@Fails` and resolvers' `static failures` in the API description. */
export const declaredFailures: Capability = { describe };
