import { PgStore, type SpaceDecl, OpenSpace } from '../../../cache';
import { checkBoolean, checkNumber, checkOneOf, checkWhole, noteRefusal } from '../../../options';
import { innerContracts, type Contract } from '../../core/answers';
import type { RecordCheck } from '../../route/extensions';
import type { RouteRecord } from '../../route/route-record';
import type { Isolation } from './atomic-run';
import { Tx } from './tx';
import { IDEMPOTENT, type IdempotentMark } from './idempotent-mark';
import { findSpace } from './idempotent-route';

/**
 * What an idempotent route may not answer with, by kind: a kept answer could not replay it. A
 * contract of a capability's own kind says so itself (`replayable`).
 */
const UNKEEPABLE: Partial<Record<Contract['kind'], string>> = {
  redirect: 'Redirect',
  events: 'EventStream',
};

/** The first kind an idempotent route may not answer with, wherever it sits in the contract (every `Reply` variant too). */
function unkeepable(contract: Contract | null): string | null {
  if (contract === null) return null;
  if (contract.kind === 'own' && !contract.replayable) return contract.name;
  const own = UNKEEPABLE[contract.kind];
  if (own !== undefined) return own;
  for (const inner of innerContracts(contract)) {
    const found = unkeepable(inner);
    if (found !== null) return found;
  }
  return null;
}

/** Methods that change nothing, so a retry is harmless without a key. */
const SAFE_METHODS: readonly string[] = ['GET', 'HEAD', 'OPTIONS'];

/** What was passed to `@Idempotent` instead of a Space declaration, or null when it is one. */
function notASpace(x: unknown): string | null {
  if (x instanceof OpenSpace)
    return `the opened space "${x.space.name}" (Space.open(store) gives what app.provide takes)`;
  const decl = x as Partial<SpaceDecl> | null;
  if (
    typeof x === 'object' &&
    decl !== null &&
    typeof decl.name === 'string' &&
    typeof decl.open === 'function' &&
    typeof decl.ttlSeconds === 'number'
  )
    return null;
  const what =
    x === null || x === undefined
      ? String(x)
      : typeof x === 'function'
        ? `the class ${(x as Function).name || 'anonymous'}`
        : typeof x === 'object'
          ? `an object that is not a Space (${Object.keys(x).slice(0, 4).join(', ') || 'no keys'})`
          : `${typeof x} ${JSON.stringify(x)}`;
  return what;
}

/** The Refusals of `@Idempotent`: what a route, its space and its answers must be. */
export const checkIdempotent: RecordCheck = (record: RouteRecord, services, problems) => {
  const mark = record.marks.get(IDEMPOTENT);
  checkAtomic(record, mark, services.all(), problems);
  if (mark === undefined) return;
  const label = record.label;
  if (SAFE_METHODS.includes(record.method))
    problems.push(
      `${label}: @Idempotent on ${record.method}: a ${record.method} is idempotent already (a retry cannot do anything twice): take @Idempotent off`,
    );
  const given = notASpace(mark.space);
  if (given !== null)
    problems.push(
      `${label}: @Idempotent was given ${given}; it takes the Space declaration (const Orders = Space('orders', { … }); @Idempotent(Orders)) and the opened space is provided (app.provide(Orders.open(store)))`,
    );
  else if (findSpace(services.all(), mark.space) === null) {
    const name = (mark.space as SpaceDecl).name;
    problems.push(
      `${label}: @Idempotent space "${name}" is not provided: app.provide(${name}.open(store))`,
    );
  }
  const kind = unkeepable(record.contract);
  if (kind !== null)
    problems.push(
      `${label}: @Idempotent cannot keep ${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind} answer`,
    );
  if (record.contract === null && record.args.some((a) => a.kind === 'ctx')) {
    problems.push(
      `${label}: @Idempotent route answers through the Ctx: declare @Returns(...) and return the value so it can be kept`,
    );
  }
  if (
    mark.by === undefined &&
    record.args.some((a) => a.kind === 'authorization' || (a.kind === 'resolved' && a.type !== Tx))
  ) {
    problems.push(
      `${label}: @Idempotent without by on a route with more than one caller (it takes an Authorization or a resolved caller): name the caller with { by }`,
    );
  }
};

/** Refusals of atomic routes: a store that cannot, a `Tx` where there is no transaction. */
function checkAtomic(
  record: RouteRecord,
  mark: IdempotentMark | undefined,
  provided: readonly unknown[],
  problems: string[],
): void {
  const label = record.label;
  const wantsTx = record.args.some((a) => a.kind === 'resolved' && a.type === Tx);
  if (wantsTx && mark?.atomic !== true)
    problems.push(
      `${label}: a Tx parameter needs an atomic route: @Idempotent(Space, { atomic: true }) on a space opened on a PgStore`,
    );
  if (mark === undefined || !ATOMIC_OPTIONS.some((o) => mark[o] !== undefined)) return;
  checkAtomicOptions(label, mark, problems);
  const owner = { where: `${label}: @Idempotent` };
  const { atomic, isolation, deadlineMs } = mark as unknown as Record<string, unknown>;
  if (atomic !== undefined) noteRefusal(problems, () => checkBoolean(owner, 'atomic', atomic));
  if (isolation !== undefined)
    noteRefusal(problems, () => checkOneOf(owner, 'isolation', isolation, ISOLATIONS));
  if (deadlineMs !== undefined && mark.atomic !== true)
    problems.push(
      `${label}: @Idempotent deadlineMs needs atomic: true (it bounds the transaction)`,
    );
  else if (deadlineMs !== undefined)
    noteRefusal(problems, () =>
      checkNumber(owner, 'deadlineMs', deadlineMs, { unit: 'ms', above: 0, max: MAX_TIMER_MS }),
    );
  if (mark.atomic !== true) return;
  const space = findSpace(provided, mark.space);
  if (space !== null && !(space.store instanceof PgStore))
    problems.push(
      `${label}: @Idempotent atomic: true needs a space opened on a PgStore (space "${space.space.name}" is on ${space.store.constructor.name}): only Postgres can commit the claim, the handler's writes and the answer together`,
    );
  if (record.contract?.kind === 'events' || unkeepable(record.contract) !== null)
    problems.push(
      `${label}: @Idempotent atomic: true cannot stream its answer: the answer commits with the transaction, so it is whole before it is sent`,
    );
}

/** The options of `@Idempotent` that only an atomic route takes. */
const ATOMIC_OPTIONS = ['atomic', 'deadlineMs', 'holdTransaction', 'waitMs', 'maxWaiters'] as const;

/** `holdTransaction`, `waitMs` and `maxWaiters`: atomic routes only, each of its kind. */
function checkAtomicOptions(label: string, mark: IdempotentMark, problems: string[]): void {
  const { holdTransaction, waitMs, maxWaiters } = mark as unknown as Record<string, unknown>;
  const given = (['holdTransaction', 'waitMs', 'maxWaiters'] as const).filter(
    (o) => mark[o] !== undefined,
  );
  if (given.length > 0 && mark.atomic !== true)
    problems.push(
      `${label}: @Idempotent ${given.join(', ')} needs atomic: true (a plain route answers a duplicate in flight 409 at once and holds no transaction)`,
    );
  const owner = { where: `${label}: @Idempotent` };
  if (holdTransaction !== undefined)
    noteRefusal(problems, () => checkBoolean(owner, 'holdTransaction', holdTransaction));
  if (waitMs !== undefined)
    noteRefusal(problems, () =>
      checkNumber(owner, 'waitMs', waitMs, { unit: 'ms', min: 0, max: MAX_TIMER_MS }),
    );
  if (maxWaiters !== undefined)
    noteRefusal(problems, () => checkWhole(owner, 'maxWaiters', maxWaiters, { min: 0 }));
}

/** The longest delay a Node timer keeps (2^31 − 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const ISOLATIONS: readonly Isolation[] = ['read committed', 'repeatable read', 'serializable'];
