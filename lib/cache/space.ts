import { checkNumber, checkPositive, checkWhole, type OptionOwner } from '../options';
import { CacheError, invalidArgument } from './errors';
import { OpenSpace, type KeepMode, type SpaceDecl } from './open-space';
import type { Store } from './store';

export type { KeepMode, SpaceDecl } from './open-space';

/** Options of `Space(name, …)`. */
export interface SpaceOptions {
  /** How long a kept value lives, which for an idempotent route is how long a client may retry with one key. */
  readonly ttlSeconds: number;
  /** The largest value the space keeps, in bytes; a larger one is not stored (put answers false). */
  readonly maxBytes: number;
  /**
   * How long an idempotent route's claim holds its key before it is renewed (every third of it,
   * while the handler runs): a process that dies mid-request blocks its key for at most this long.
   * Default 30 000.
   */
  readonly leaseMs?: number;
  /**
   * How long before its lease runs out a handler's claim counts as lost in its own process. While
   * the handler runs, reading `c.signal`, an outbound call of fw's going out and a `c.step`
   * compare the time since the store last confirmed the claim with `leaseMs − leaseMarginMs`, at
   * once and with no round trip, and abort the handler's signal past it: a process that stalled
   * (a SIGSTOP, a long GC pause) stops before its next effect rather than a renewal later. The
   * margin covers the store's clock running ahead of this process's and the time between a
   * check and the effect it guards. At least 0 and less than `leaseMs`. Default a tenth of `leaseMs`.
   */
  readonly leaseMarginMs?: number;
  /**
   * The most one caller of an idempotent route may hold in the space at once (claims and kept
   * answers, record bytes plus key, plus a `MemoryStore`'s own cost per entry), so that one caller
   * cannot fill the store for the others. Default on a `MemoryStore`: a sixteenth of its budget
   * shared by the spaces opened on it (`bytes / (16 × spaces)`, at least two of the largest
   * records), so a handful of callers can never fill it; on any other store the larger of 16 MiB
   * and 64 × maxBytes. Routes with no `by` (one caller) are not bounded by it.
   */
  readonly maxBytesPerCaller?: number;
  /**
   * Which answers of an idempotent route are kept and replayed to retries; the others give the key
   * back, so a retry runs the handler again. `'success'`: only 1xx–3xx answers. `'declared'` (the
   * default): every answer the handler returned below 500 (a declared 4xx such as a typed 409 is
   * final); a failure it threw, and any 5xx, are not kept, so a transient failure never poisons a
   * key. `'all'`: every answer, a failure the handler threw (a 5xx too) included, as the IETF draft
   * and Stripe do; a request refused before its handler ran (401, 400 for its arguments) is never
   * kept. Whatever the setting, an answer refused after its handler ran (a `@Returns` check) is kept.
   */
  readonly keep?: KeepMode;
  /**
   * The page a request without an `Idempotency-Key` is pointed to: its 400 carries
   * `Link: <keyDocs>; rel="describedby"` (IETF draft §2.7). An absolute URL or a path on this
   * server. Default `DEFAULT_KEY_DOCS`, the draft itself.
   */
  readonly keyDocs?: string;
}

/** Where a request without an `Idempotency-Key` is pointed when the space sets no `keyDocs`: the IETF draft. */
export const DEFAULT_KEY_DOCS =
  'https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/';

const KEEP_MODES: readonly KeepMode[] = ['success', 'declared', 'all'];

/** The claim lease when a space does not set one. */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * Declares a space of bytes. Declaring touches no store; `open` binds it to one.
 *
 * @example
 * const Orders = Space('orders', { ttlSeconds: 86400, maxBytes: 64 * 1024, leaseMs: 60_000 });
 * // a handler's claim counts as lost in its process 6 s before its lease runs out (the default tenth)
 * app.provide(Orders.open(new MemoryStore({ bytes: 64 * 1024 * 1024 })));
 */
export function Space(name: string, options: SpaceOptions): SpaceDecl {
  if (typeof name !== 'string' || name === '') {
    throw new CacheError(
      'InvalidArgument',
      `Space: name must be a non-empty string, got ${JSON.stringify(name)}`,
    );
  }
  const owner: OptionOwner = { where: `Space "${name}"`, refuse: invalidArgument };
  const ttlSeconds = checkPositive(owner, 'ttlSeconds', options?.ttlSeconds, { unit: 'seconds' });
  const maxBytes = checkWhole(owner, 'maxBytes', options?.maxBytes, { unit: 'bytes', min: 0 });
  const leaseMs = checkPositive(owner, 'leaseMs', options.leaseMs ?? DEFAULT_LEASE_MS, {
    unit: 'ms',
  });
  // The lease margin: from 0 to less than the lease; by default a tenth of it.
  const leaseMarginMs = checkNumber(owner, 'leaseMarginMs', options.leaseMarginMs ?? leaseMs / 10, {
    min: 0,
    below: leaseMs,
    belowName: 'leaseMs',
  });
  const maxBytesPerCaller =
    options.maxBytesPerCaller === undefined || options.maxBytesPerCaller === null
      ? null
      : checkWhole(owner, 'maxBytesPerCaller', options.maxBytesPerCaller, {
          unit: 'bytes',
          min: 1,
        });
  const keep = keepOf(name, options.keep);
  const keyDocs = keyDocsOf(name, options.keyDocs);
  const decl: SpaceDecl = Object.freeze({
    name,
    ttlSeconds,
    maxBytes,
    leaseMs,
    leaseMarginMs,
    maxBytesPerCaller,
    keep,
    keyDocs,
    open(store: Store): OpenSpace {
      return new OpenSpace(decl, store);
    },
  });
  return decl;
}

function keepOf(name: string, given: KeepMode | undefined): KeepMode {
  const keep = given ?? 'declared';
  if (KEEP_MODES.includes(keep)) return keep;
  throw new CacheError(
    'InvalidArgument',
    `Space "${name}": keep must be one of 'success', 'declared', 'all', got ${JSON.stringify(keep)}`,
  );
}

/** The docs link, checked: it goes into a header between < and >, so no whitespace, control, quote or angle bracket. */
function keyDocsOf(name: string, given: string | undefined): string {
  const keyDocs = given ?? DEFAULT_KEY_DOCS;
  if (typeof keyDocs === 'string' && DOCS_LINK.test(keyDocs)) return keyDocs;
  throw new CacheError(
    'InvalidArgument',
    `Space "${name}": keyDocs must be an http(s) URL or a path starting with /, without spaces, quotes or angle brackets, got ${JSON.stringify(keyDocs)}`,
  );
}

const DOCS_LINK = /^(https?:\/\/|\/)[^\s<>"\u0000-\u001f\u007f-\uffff]*$/;
