import { isAscii } from 'node:buffer';
import { hash, randomBytes } from 'node:crypto';
import { CacheError, OpenSpace, type SpaceDecl } from '../cache';
import type { Contract, HeaderEntry } from './answers';
import type { AroundFactory, Capability } from './compile-route';
import { isThenable, type CapturedAnswer, type Ctx, type Resolvable } from './ctx';
import type { OperationBuilder } from './openapi';
import { HttpError } from './errors';
import { KeptAnswers, type KeptAnswer, type RequestParts } from './kept-answers';
import { fail } from './fail';
import type { RouteRecord } from './route-record';
import type { RecordCheck } from './scanner';

/** Longest `Idempotency-Key`, in bytes. */
export const MAX_KEY_BYTES = 255;
/**
 * How long an in-flight claim holds its key. Far shorter than a record's TTL, so a process that dies
 * mid-request blocks its key for at most this long; far longer than a request should take.
 */
export const CLAIM_LEASE_MS = 30_000;

const REPLAYED: HeaderEntry = Object.freeze({ name: 'idempotent-replayed', value: 'true' });

/**
 * A record in the space: `[u32 meta length][meta JSON][body bytes]`. The meta says whether it is an
 * in-flight claim (with its owner token) or a kept answer, and carries the request's fingerprint.
 */
interface Meta {
  readonly k: 'claim' | 'kept';
  readonly fp: string;
  readonly owner?: string;
  readonly status?: number;
  readonly type?: string | null;
  readonly own?: readonly [string, string][];
}

function encodeRecord(meta: Meta, body: Uint8Array | null): Buffer {
  const head = Buffer.from(JSON.stringify(meta));
  const out = Buffer.allocUnsafe(4 + head.length + (body?.length ?? 0));
  out.writeUInt32BE(head.length, 0);
  head.copy(out, 4);
  if (body) out.set(body, 4 + head.length);
  return out;
}

/** The kept answer a record holds, or null when it is an in-flight claim. */
function decodeKept(bytes: Buffer): KeptAnswer | null {
  const n = bytes.readUInt32BE(0);
  const meta = JSON.parse(bytes.toString('utf8', 4, 4 + n)) as Meta;
  if (meta.k === 'claim') return null;
  const body = bytes.subarray(4 + n);
  return {
    fp: meta.fp,
    status: meta.status!,
    type: meta.type ?? null,
    // An ASCII body (most JSON) is the same bytes as a string, and a string leaves with the head in
    // one piece without being converted again on every replay.
    body: meta.type == null && body.length === 0 ? null : body.length <= KeptAnswers.MAX_ENTRY_BYTES && isAscii(body) ? body.toString('latin1') : body,
    own: (meta.own ?? []).map(([name, value]) => ({ name: name.toLowerCase(), value })),
  };
}

/** The key as sent: a bare value, or the quoted string form of the IETF draft (`"abc"` is `abc`). */
export function readKey(header: string | string[] | undefined): string {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined) throw fail.badRequest('Idempotency-Key missing');
  let key = raw.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1).replace(/\\(.)/g, '$1');
  if (key === '') throw fail.badRequest('Idempotency-Key is empty');
  // A UTF-16 unit is at most 3 bytes of UTF-8: a short key needs no counting.
  if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) throw fail.badRequest('Idempotency-Key longer than %d bytes', MAX_KEY_BYTES);
  return key;
}

/** (caller, key) as one store key that no other pair can spell: the caller's length comes first. */
export const recordKey = (caller: string, key: string): string => `${caller.length}:${caller}:${key}`;

/** SHA-256 over method, path, query and the raw body bytes, in one call (no Hash object per request). */
function fingerprint(p: RequestParts): string {
  const head = `${p.method}\0${p.path}\0${p.rawQuery}\0`;
  const n = Buffer.byteLength(head);
  const all = Buffer.allocUnsafe(n + p.body.length);
  all.write(head, 0, 'utf8');
  all.set(p.body, n);
  return hash('sha256', all, 'base64url');
}

const unavailable = (e: unknown): never => {
  if (e instanceof CacheError) throw new HttpError('StoreUnavailable', 'idempotency store unavailable');
  throw e;
};

function toBytes(body: Uint8Array | string | null): Uint8Array | null {
  return typeof body === 'string' ? Buffer.from(body) : body;
}

const around: AroundFactory = (record, services) => {
  const mark = record.idempotent;
  if (mark === null) return null;
  const space = findSpace(services.all(), mark.space);
  if (space === null) return null; // refused by the check below
  const by = mark.by ?? null;
  const resolvers = record.args.flatMap((a) => (a.kind === 'resolved' ? [a.type as unknown as Resolvable<unknown>] : []));
  const label = record.label;
  const ttlMs = space.ttlSeconds * 1000;
  const answers = new KeptAnswers();

  function replay(c: Ctx, a: KeptAnswer): void {
    // Kept headers were checked when the answer was first sent: no second check.
    for (let i = 0; i < a.own.length; i++) c.putHeader(a.own[i].name, a.own[i].value);
    c.putHeader(REPLAYED.name, REPLAYED.value);
    c.write(a.status, a.type, a.body, null);
  }

  // The steps run in order: the caller (its resolvers answer 401, `by` 403), the key, the raw body,
  // the store. Each goes on at once when what it needs is here, so a replay from an in-process
  // store costs one wait for the body and no async-function frame; a replay never reads the body
  // into its class.

  /** The caller's name, or a promise of it while a resolver or `by` is asynchronous. */
  function callerOf(c: Ctx, from: number): string | Promise<string> {
    for (let i = from; i < resolvers.length; i++) {
      const v = c.resolving(resolvers[i]);
      if (isThenable(v)) return Promise.resolve(v).then(() => callerOf(c, i + 1));
    }
    if (by === null) return '';
    const who = by(c);
    return isThenable(who) ? Promise.resolve(who).then(named) : named(who);
  }

  function withCaller(c: Ctx, proceed: () => unknown, caller: string): unknown {
    const id = recordKey(caller, readKey(c.req.headers['idempotency-key']));
    return c.afterBody((body) => withBody(c, proceed, id, body));
  }

  function withBody(c: Ctx, proceed: () => unknown, id: string, body: Buffer): unknown {
    const parts: RequestParts = { method: c.method, path: c.path, rawQuery: c.rawQuery, body };
    // An in-process store answers at once: a replay then waits for nothing but the body.
    let existing: Buffer | null | undefined;
    try {
      existing = space!.peek(id);
    } catch (e) {
      unavailable(e);
    }
    if (existing === undefined) {
      return space!.get(id).catch(unavailable).then((now) => (now !== null ? answerExisting(c, id, now, parts) : first(c, proceed, id, parts)));
    }
    return existing !== null ? answerExisting(c, id, existing, parts) : first(c, proceed, id, parts);
  }

  /** No record yet: claim the key, run the handler, keep its answer, send it. */
  async function first(c: Ctx, proceed: () => unknown, id: string, parts: RequestParts): Promise<void> {
    const fp = fingerprint(parts);
    const owner = randomBytes(12).toString('base64url');
    const claim = encodeRecord({ k: 'claim', fp, owner }, null);
    if (!(await space!.putIfAbsent(id, claim, CLAIM_LEASE_MS).catch(unavailable))) {
      const now = await space!.get(id).catch(unavailable);
      if (now === null) throw inFlight(c); // taken and gone in between: let the client retry
      return answerExisting(c, id, now, parts);
    }
    let answer: CapturedAnswer;
    c.capture = true;
    try {
      await proceed();
      answer = c.captured!;
    } catch (e) {
      c.capture = false;
      await space!.del(id, { expect: claim }).catch(() => c.core.log(`${label}: idempotency claim not released (store unavailable); it lapses in ${CLAIM_LEASE_MS / 1000} s`));
      throw e;
    }
    c.capture = false;
    const body = toBytes(answer.body);
    const kept = encodeRecord({ k: 'kept', fp, status: answer.status, type: answer.type, own: (answer.own ?? []).map((h) => [h.name, h.value]) }, body);
    if (kept.length > space!.maxBytes) {
      c.core.log(`${label}: answer of ${kept.length} bytes is larger than the space's maxBytes (${space!.maxBytes}): sent, not kept`);
      await space!.del(id, { expect: claim }).catch(() => undefined);
    } else {
      const stored = await space!.put(id, kept, ttlMs, { expect: claim }).catch(() => false);
      if (!stored) c.core.log(`${label}: answer not kept (claim lapsed or store unavailable)`);
      else answers.kept(id, kept, decodeKept(kept)!, parts);
    }
    c.write(answer.status, answer.type, answer.body, answer.own);
  }

  function answerExisting(c: Ctx, id: string, bytes: Buffer, parts: RequestParts): void {
    const entry = answers.find(id, bytes, decodeKept);
    if (entry === null) throw inFlight(c);
    if (!KeptAnswers.known(entry, parts)) {
      if (fingerprint(parts) !== entry.answer.fp) throw fail.unprocessable('Idempotency-Key was used for a different request');
      KeptAnswers.learn(entry, parts);
    }
    replay(c, entry.answer);
  }

  return (c, proceed) => {
    const caller = callerOf(c, 0);
    return isThenable(caller) ? caller.then((name) => withCaller(c, proceed, name)) : withCaller(c, proceed, caller);
  };
};

function named(who: string | null | undefined): string {
  if (who === null || who === undefined) throw fail.forbidden('no caller for this idempotent request');
  return who;
}

function inFlight(c: Ctx): Error {
  c.setHeader('retry-after', '1');
  return fail.conflict('Idempotency-Key is still being answered');
}

function findSpace(provided: readonly unknown[], decl: object): OpenSpace | null {
  for (const p of provided) if (p instanceof OpenSpace && p.space === decl) return p;
  return null;
}

/** The kinds an idempotent route may not answer with, wherever they sit in the contract. */
function unkeepable(contract: Contract | null): string | null {
  if (contract === null) return null;
  switch (contract.kind) {
    case 'file':
      return 'FileBody';
    case 'redirect':
      return 'Redirect';
    case 'versioned':
      return 'Versioned';
    case 'events':
      return 'EventStream';
    case 'status':
    case 'optional':
    case 'reply':
      return unkeepable(contract.inner);
    default:
      return null;
  }
}

const check: RecordCheck = (record: RouteRecord, services, problems) => {
  const mark = record.idempotent;
  if (mark === null) return;
  const label = record.label;
  if (findSpace(services.all(), mark.space) === null) {
    const name = (mark.space as Partial<SpaceDecl>).name ?? '?';
    problems.push(`${label}: @Idempotent space "${name}" is not provided: app.provide(${name}.open(store))`);
  }
  const kind = unkeepable(record.contract);
  if (kind !== null) problems.push(`${label}: @Idempotent cannot keep ${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind} answer`);
  if (record.contract === null && record.args.some((a) => a.kind === 'ctx')) {
    problems.push(`${label}: @Idempotent route answers through the Ctx: declare @Returns(...) and return the value so it can be kept`);
  }
  if (mark.by === undefined && record.args.some((a) => a.kind === 'authorization' || a.kind === 'resolved')) {
    problems.push(`${label}: @Idempotent without by on a route with more than one caller (it takes an Authorization or a resolved caller): name the caller with { by }`);
  }
};

/**
 * The API description of an idempotent route: the required key, the extra answers, and the
 * replay marker on every success answer (OPEN-15). 403 only when `by` can refuse (OPEN-14).
 */
const describe = (record: RouteRecord, op: OperationBuilder): void => {
  const mark = record.idempotent;
  if (mark === null) return;
  op.parameter({
    name: 'Idempotency-Key',
    in: 'header',
    description: `Names this request: retries with the same key get the kept answer. At most ${MAX_KEY_BYTES} bytes.`,
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_BYTES },
  });
  for (const status of op.answerStatuses) {
    op.header(status, 'Idempotent-Replayed', { description: 'Present (true) when this is the kept answer replayed', required: false, schema: { type: 'string', enum: ['true'] } });
  }
  op.failure(400, 'Idempotency-Key missing, empty or too long');
  if (mark.by !== undefined) op.failure(403, 'no caller for this idempotent request');
  op.failure(409, 'Idempotency-Key is still being answered', { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } });
  op.failure(422, 'Idempotency-Key was used for a different request');
};

/** Idempotent replay: the Refusals of `@Idempotent`, the step around its handler and its API description. */
export const idempotency: Capability = { checks: [check], arounds: [around], describe };
