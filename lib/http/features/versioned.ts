import {
  innerContracts,
  toContract,
  ownContract,
  toHeaderList,
  type AnswerOf,
  type AtMost8Headers,
  type Contract,
  type ContractLike,
  type HeaderList,
  type OwnContract,
  type ReturnedHeaders,
} from '../core/answers';
import type { Capability, RecordCheck } from '../route/extensions';
import type { OperationSink } from '../route/extensions';
import type { RouteRecord } from '../route/route-record';
import type { Ctx } from '../request/ctx';
import type { Encoder } from '../route/extensions';
import { HttpError } from '../core/errors';
import { etagOf, type Version } from '../core/etag';

export { etagOf, noneMatchHolds, type Version } from '../core/etag';

const VERSIONED = Symbol('fw.versioned');
/** The name of the Versioned contract kind: its encoder's key, and how Refusals name it. */
const VERSIONED_NAME = 'Versioned';
/** What a `Versioned(T)` route returns. */
export interface VersionedValue<T> {
  readonly [VERSIONED]: true;
  readonly version: Version;
  /** `undefined` for `unchanged`. */
  readonly value: T | undefined;
  readonly unchanged: boolean;
  readonly headers: HeaderList | null;
}

/**
 * An answer with a version: a weak ETag made from it, and 304 when the client already has it. The
 * handler returns what `Versioned.of` or `Versioned.unchanged` build.
 * @example @Returns(Versioned(Order)) … return Versioned.of(entry.version, entry.order)
 */
export function Versioned<const C extends ContractLike>(
  inner: C,
): Contract<VersionedValue<AnswerOf<C>>> {
  return ownContract({ name: VERSIONED_NAME, inner: toContract(inner), statuses: [304] });
}
/** `value` at `version`, with up to 8 headers (`{ Name: 'value' }` or `headers.of([...])`). */
Versioned.of = <T, H extends ReturnedHeaders = HeaderList>(
  version: Version,
  value: T,
  headers: AtMost8Headers<H> | null = null,
): VersionedValue<T> => ({
  [VERSIONED]: true,
  version,
  value,
  unchanged: false,
  headers: headers === null ? null : toHeaderList(headers as ReturnedHeaders, 'Versioned.of'),
});
/**
 * The client has this version already (check with `c.clientHas`): 304 without doing the work,
 * with `headers` when given.
 * @example if (c.clientHas(e.version)) return Versioned.unchanged(e.version, { 'Cache-Control': 'no-cache' })
 */
Versioned.unchanged = <H extends ReturnedHeaders = HeaderList>(
  version: Version,
  headers: AtMost8Headers<H> | null = null,
): VersionedValue<never> => ({
  [VERSIONED]: true,
  version,
  value: undefined,
  unchanged: true,
  headers:
    headers === null ? null : toHeaderList(headers as ReturnedHeaders, 'Versioned.unchanged'),
});
/** The same call as `Versioned.unchanged(version, headers)`: the spec's name for it. */
Versioned.unchangedWith = <H extends ReturnedHeaders>(
  version: Version,
  headers: AtMost8Headers<H>,
): VersionedValue<never> => Versioned.unchanged<H>(version, headers);

const encoder = (
  contract: OwnContract,
  label: string,
  compile: (inner: Contract) => Encoder,
): Encoder => {
  const inner = compile(contract.inner!);
  return (c: Ctx, v, status, own) => {
    const r = v as VersionedValue<unknown>;
    if (typeof v !== 'object' || v === null || r[VERSIONED] !== true)
      throw new TypeError(
        `${label}: a Versioned route returned something other than Versioned.of(version, value) or Versioned.unchanged(version)`,
      );
    c.setHeader('etag', etagOf(r.version));
    const extra = r.headers === null ? null : r.headers.entries;
    const list =
      extra === null || extra.length === 0 ? own : own === null ? extra : [...extra, ...own];
    if (c.clientHas(r.version)) {
      if (list !== null) for (const h of list) c.setHeader(h.name, h.value);
      c.empty(304);
      return;
    }
    if (r.unchanged)
      throw new HttpError(
        'UnchangedWithoutVersion',
        `${label}: Versioned.unchanged(${String(r.version)}) but the client did not send that version`,
      );
    return inner(c, r.value, status, list);
  };
};

/** The ETag on every success answer of a Versioned route, and the 304 beside them. */
const describe = (record: RouteRecord, op: OperationSink): void => {
  if (!isVersioned(record.contract)) return;
  for (const status of op.answerStatuses)
    op.header(status, 'ETag', {
      description: 'weak tag of the answer\'s version: W/"<version>"',
      schema: { type: 'string' },
    });
  op.answer(304, {
    description: 'Not Modified: If-None-Match holds the current version',
    headers: { ETag: { schema: { type: 'string' } } },
  });
};

const isVersionedHere = (c: Contract): c is OwnContract =>
  c.kind === 'own' && c.name === VERSIONED_NAME;

/** A Versioned anywhere in the contract (its check lets it stand only at the top or inside Optional). */
function isVersioned(c: Contract | null): boolean {
  return c !== null && (isVersionedHere(c) || innerContracts(c).some(isVersioned));
}

/**
 * Where Versioned may sit: its ETag and 304 are the route's, so not inside Status or Reply (which
 * fix the status), and what it versions is a value that is there (not Optional, not a stream).
 */
const check: RecordCheck = (record, _services, problems) => {
  const walk = (c: Contract, under: 'Status' | 'Reply' | null): void => {
    if (isVersionedHere(c)) {
      if (under !== null) problems.push(`${record.label}: Versioned cannot sit inside ${under}`);
      const inner = c.inner;
      if (inner?.kind === 'optional')
        problems.push(
          `${record.label}: Versioned(Optional(T)) is refused: report absence with fail.notFound()`,
        );
      if (inner?.kind === 'events')
        problems.push(
          `${record.label}: Versioned(EventStream) is refused: an event stream has no version`,
        );
    }
    const here = c.kind === 'status' ? 'Status' : c.kind === 'reply' ? 'Reply' : under;
    for (const inner of innerContracts(c)) walk(inner, here);
  };
  if (record.contract !== null) walk(record.contract, null);
};

/** Versioned answers: their encoder, where they may sit, and their description. */
export const versioned: Capability = {
  checks: [check],
  encoders: { [VERSIONED_NAME]: encoder },
  describe,
};
