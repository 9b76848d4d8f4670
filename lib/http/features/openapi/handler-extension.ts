import type { Contract } from '../../core/answers';
import type { ArgRecord, RouteRecord } from '../../route/route-record';
import { IDEMPOTENT } from '../idempotency/idempotent-mark';
import type { OperationBuilder } from './operation-builder';

/** Where a client-side argument goes; null for one the server fills (Ctx, services, resolved values, credentials). */
export type HandlerArg =
  | { readonly in: 'body' | 'form' }
  | { readonly in: 'query' }
  | { readonly in: 'path' | 'query' | 'header'; readonly name: string }
  | null;

/** The `x-fw-handler` member of an operation: what `clientOf` in `fw-http/fetch` needs without the server's code. */
export interface HandlerExtension {
  readonly controller: string;
  readonly method: string;
  /** One entry per handler parameter, in order. */
  readonly args: readonly HandlerArg[];
  readonly idempotent: boolean;
  /** The statuses the contract answers with a value of its own (not fw's failure body). */
  readonly answers: readonly number[];
}

/**
 * Adds `x-fw-handler` to the operation of a program's route: the controller and handler names, the
 * place of each argument and the declared answers. Types cannot see decorators, so a typed client
 * built from the controller's types alone reads the positions from here.
 */
export function describeHandler(record: RouteRecord, op: OperationBuilder): void {
  if (record.builtIn) return;
  const value: HandlerExtension = {
    controller: record.controller.name,
    method: record.key,
    args: record.args.map(argPlace),
    idempotent: record.marks.get(IDEMPOTENT) !== undefined,
    answers: record.contract === null ? [204] : [...new Set(answersOf(record.contract))],
  };
  op.extension('x-fw-handler', value);
}

function argPlace(a: ArgRecord): HandlerArg {
  switch (a.kind) {
    case 'body':
      return { in: 'body' };
    case 'form':
      return { in: 'form' };
    case 'queryClass':
    case 'querySchema':
      return { in: 'query' };
    case 'query':
      return { in: 'query', name: a.name };
    case 'param':
      return { in: 'path', name: a.name };
    case 'header':
      return { in: 'header', name: a.name };
    default:
      return null;
  }
}

function answersOf(c: Contract, status: number | null = null): number[] {
  switch (c.kind) {
    case 'void':
      return [status ?? 204];
    case 'status':
      return answersOf(c.inner, c.status);
    case 'optional':
      return answersOf(c.inner, status);
    case 'own':
      return [...(c.inner === null ? [status ?? 200] : answersOf(c.inner, status)), ...c.statuses];
    case 'reply':
      return c.statuses.flatMap((s) => answersOf(c.variants?.[s] ?? c.inner, s));
    case 'redirect':
      return [c.status];
    default:
      return [status ?? 200];
  }
}
