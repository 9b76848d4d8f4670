import { CHALLENGE } from '../core/authorization';
import { fail } from '../core/fail';
import { type Ctx } from '../request/ctx';
import { isThenable } from '../core/thenable';
import type {
  AroundFactory,
  Capability,
  OperationSink,
  RecordCheck,
  SecurityDeclaration,
} from '../route/extensions';
import { MarkKey } from '../route/mark-key';
import { marks } from '../route/metadata';
import type { RouteRecord } from '../route/route-record';

/** One resolver a route must resolve before its handler runs, and the scopes it must grant. */
export interface GuardEntry {
  readonly resolver: Function;
  readonly scopes: readonly string[];
}

/** What `@Guard`/`@Requires` leave on a route: every guard, the controller's first. */
export interface GuardMark {
  readonly guards: readonly GuardEntry[];
}

/** The key of a route's guards: `record.marks.get(GUARD)`. */
export const GUARD = new MarkKey<GuardMark>('guard');

/** What a guard's resolver may offer besides `static resolve(c)`. */
interface GuardResolver {
  resolve(c: Ctx): unknown;
  scopesOf?(c: Ctx, value: unknown): readonly string[];
  insufficientScope?(scopes: readonly string[]): Error;
  authorization?: unknown;
  security?: SecurityDeclaration;
}

/** RFC 6749 §3.3 scope-token: printable ASCII but space, `"` and `\`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

type ClassOrMethodDecorator = <F extends Function>(
  target: F | object,
  key?: string | symbol,
  descriptor?: PropertyDescriptor,
) => void;

function guardDecorator(entry: GuardEntry): ClassOrMethodDecorator {
  return (target, key) => {
    if (key !== undefined) {
      addGuard(target, String(key), entry, false);
      return;
    }
    // A class decorator runs after its methods' decorators: every route of the class is known.
    const proto = (target as Function).prototype as object;
    for (const route of marks.routes(proto)) addGuard(proto, route.key, entry, true);
  };
}

function addGuard(proto: object, key: string, entry: GuardEntry, first: boolean): void {
  const prior = marks.marksOf(proto, key).get(GUARD)?.guards ?? [];
  const guards = first ? [entry, ...prior] : [...prior, entry];
  marks.setMark(proto, key, GUARD, Object.freeze({ guards: Object.freeze(guards) }));
}

/**
 * Resolves `resolver` before the handler of every route of the controller (or of one route), with
 * no parameter for it: its 401 stops the request, and the document lists its security and 401.
 * The value is cached for the request, so the handler can still take it or `c.resolve` it.
 * @example @Guard(Account) @Controller('/orders') class OrdersController { … }
 */
export function Guard(resolver: Function): ClassOrMethodDecorator {
  return guardDecorator({ resolver, scopes: [] });
}

/**
 * As `@Guard`, and the resolved caller must hold every one of `scopes` (the resolver's
 * `scopesOf(c, value)` says which it holds): 403 otherwise, `insufficient_scope` for a bearer JWT.
 * @example @Requires(ShopJwt, 'admin') @Get('/admin/stats') stats() { … }
 */
export function Requires(resolver: Function, ...scopes: string[]): ClassOrMethodDecorator {
  return guardDecorator({ resolver, scopes: Object.freeze([...scopes]) });
}

const nameOf = (f: unknown): string =>
  typeof f === 'function' ? f.name || 'anonymous' : String(f);

/** Guards that cannot work are refused at build: no resolver, scopes on a resolver without any, a bad scope. */
const check: RecordCheck = (record, _services, problems) => {
  for (const g of record.marks.get(GUARD)?.guards ?? []) {
    const r = g.resolver as unknown as (Partial<GuardResolver> & { name?: string }) | undefined;
    const what = g.scopes.length ? `@Requires(${nameOf(r)}, …)` : `@Guard(${nameOf(r)})`;
    if ((typeof r !== 'function' && typeof r !== 'object') || typeof r?.resolve !== 'function') {
      problems.push(
        `${record.label}: ${what}: ${nameOf(r)} is not resolvable: give it a static resolve(c)`,
      );
      continue;
    }
    if (g.scopes.length === 0) continue;
    if (typeof r.scopesOf !== 'function')
      problems.push(
        `${record.label}: ${what}: ${nameOf(r)} has no scopes (no static scopesOf(c, value)): scopes need a scoped scheme such as Bearer.jwt`,
      );
    for (const s of g.scopes)
      if (typeof s !== 'string' || !SCOPE_TOKEN.test(s))
        problems.push(
          `${record.label}: ${what}: scope ${JSON.stringify(s)} is not a scope token (RFC 6749 §3.3: printable ASCII without space, " or \\)`,
        );
  }
};

/** Resolves each guard in order (synchronously while they are), then checks its scopes. */
const around: AroundFactory = (record) => {
  const guards = record.marks.get(GUARD)?.guards;
  if (guards === undefined || guards.length === 0) return null;
  const list = guards.map((g) => ({ r: g.resolver as unknown as GuardResolver, scopes: g.scopes }));
  const step = (c: Ctx, i: number, proceed: () => unknown): unknown => {
    for (; i < list.length; i++) {
      const g = list[i]!;
      const v = c.resolving(g.r as { resolve(c: Ctx): unknown });
      if (isThenable(v)) {
        const at = i;
        return Promise.resolve(v).then((value) => {
          scoped(c, g.r, g.scopes, value);
          return step(c, at + 1, proceed);
        });
      }
      scoped(c, g.r, g.scopes, v);
    }
    return proceed();
  };
  return (c, proceed) => step(c, 0, proceed);
};

function scoped(c: Ctx, r: GuardResolver, scopes: readonly string[], value: unknown): void {
  if (scopes.length === 0) return;
  const held = r.scopesOf!(c, value);
  if (scopes.every((s) => held.includes(s))) return;
  throw (
    r.insufficientScope?.(scopes) ?? fail.forbidden('the caller lacks scope %s', scopes.join(' '))
  );
}

/** Each guard's security requirement (with its scopes), its 401 and, with scopes, its 403. */
const describe = (record: RouteRecord, op: OperationSink): void => {
  for (const g of record.marks.get(GUARD)?.guards ?? []) {
    const r = g.resolver as unknown as GuardResolver;
    const declared = r.security;
    const scheme =
      r.authorization === 'bearer' || r.authorization === 'basic' ? r.authorization : null;
    if (declared !== undefined) op.security(declared, g.scopes);
    else if (scheme !== null) op.security(scheme, g.scopes);
    const challenge = declared?.challenge ?? (scheme === null ? null : CHALLENGE[scheme]);
    op.failure(
      401,
      challenge === null
        ? 'the caller could not be worked out'
        : 'the credentials are missing or invalid',
      challenge === null
        ? {}
        : {
            'WWW-Authenticate': {
              description: 'The scheme that would be accepted (RFC 6750 §3 for bearer tokens)',
              schema: { type: 'string' },
              example: declared !== undefined ? 'Bearer error="invalid_token"' : challenge,
            },
          },
    );
    if (g.scopes.length === 0) continue;
    const needs = g.scopes.join(' ');
    op.failure(
      403,
      `the caller lacks scope ${needs}`,
      declared !== undefined || scheme === 'bearer'
        ? {
            'WWW-Authenticate': {
              description: 'RFC 6750 §3.1 insufficient_scope, naming the scopes needed',
              schema: { type: 'string' },
              example: `Bearer error="insufficient_scope", scope="${needs}"`,
            },
          }
        : {},
    );
  }
};

export const guards: Capability = { checks: [check], arounds: [around], describe };
