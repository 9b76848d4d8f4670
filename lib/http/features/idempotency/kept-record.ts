import { isAscii } from 'node:buffer';
import { hash, randomBytes } from 'node:crypto';
import type { HeaderBag } from '../../core/header-rules';
import type { Ctx } from '../../request/ctx';
import type { CapturedAnswer } from '../../request/exchange';
import { KeptAnswers, type KeptAnswer, type RequestParts } from './kept-answers';
import { canonicalBody } from './canonical-body';
import { exchangeOf } from '../../request/exchange-of';

// A record in a space: `[u32 meta length][meta JSON][body bytes]`. The meta says whether it is an
// in-flight claim (with its owner token) or a kept answer (with the request's fingerprint).

interface Meta {
  readonly k: 'claim' | 'kept';
  /** The request's fingerprint (a kept answer's; a claim carries none: a retry finding it gets 409 whatever it sends). */
  readonly fp?: string;
  readonly owner?: string;
  readonly status?: number;
  readonly type?: string | null;
  readonly own?: readonly [string, string][];
}

/**
 * A kept answer in one Buffer of its own, written in place (a string body as UTF-8): it is the
 * whole of its memory, so a `MemoryStore` keeps it as it is (values are handed over to a store),
 * and nothing writes into it afterwards.
 */
function encodeRecord(head: string, body: Uint8Array | string | null): Buffer {
  const n = Buffer.byteLength(head);
  const size = body === null ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const out = Buffer.allocUnsafeSlow(4 + n + size);
  out.writeUInt32BE(n, 0);
  // A string body goes with the meta in one write: one call into C++ fewer.
  if (typeof body === 'string') out.write(head + body, 4, 'utf8');
  else {
    out.write(head, 4, 'utf8');
    if (body !== null) out.set(body, 4 + n);
  }
  return out;
}

/**
 * A claim: `[u32 meta length]{"k":"claim","owner":"…"}`, 50–60 bytes, written in JS (the owner is
 * base64url and base 36: ASCII). `Buffer.alloc` never takes a slice of the shared pool, so the
 * claim is the whole of its memory and a `MemoryStore` keeps it without a copy.
 */
export function encodeClaim(owner: string): Buffer {
  const head = `{"k":"claim","owner":"${owner}"}`;
  const n = head.length;
  const out = Buffer.alloc(4 + n);
  out.writeUInt32BE(n, 0);
  for (let i = 0; i < n; i++) out[4 + i] = head.charCodeAt(i);
  return out;
}

/**
 * The meta of a kept answer: the text `JSON.stringify` gives for a `Meta` (fp is base64url, with
 * nothing to escape), spelled out so no object is built to be serialised.
 */
const keptMeta = (fp: string, a: CapturedAnswer, own: readonly [string, string][]): string =>
  `{"k":"kept","fp":"${fp}","status":${a.status},"type":${a.type === null ? 'null' : JSON.stringify(a.type)},"own":${own.length === 0 ? '[]' : JSON.stringify(own)}}`;

/**
 * A claim's owner: this process's random prefix and a count, so no two claims anywhere are the
 * same bytes (a compare-and-set on one never matches another), without a random draw per request.
 */
const OWNER_PREFIX = randomBytes(12).toString('base64url');
let owners = 0;
export const nextOwner = (): string => OWNER_PREFIX + (owners++).toString(36);

/** The kept answer a record holds, or null when it is an in-flight claim. */
export function decodeKept(bytes: Buffer): KeptAnswer | null {
  const n = bytes.readUInt32BE(0);
  const meta = JSON.parse(bytes.toString('utf8', 4, 4 + n)) as Meta;
  if (meta.k === 'claim') return null;
  const body = bytes.subarray(4 + n);
  return {
    fp: meta.fp!,
    status: meta.status!,
    type: meta.type ?? null,
    // An ASCII body (most JSON) is the same bytes as a string, and a string leaves with the head in
    // one piece without being converted again on every replay.
    body:
      meta.type == null && body.length === 0
        ? null
        : body.length <= KeptAnswers.MAX_ENTRY_BYTES && isAscii(body)
          ? body.toString('latin1')
          : body,
    own: (meta.own ?? []).map(([name, value]) => ({ name: name.toLowerCase(), value })),
  };
}

/** The kept record of `answer`: its status, type, body and the headers the handler added (those not in `before`). */
export function encodeKept(
  c: Ctx,
  answer: CapturedAnswer,
  before: HeaderBag | null,
  fp: string,
): Buffer {
  const own = added(before, exchangeOf(c).out);
  if (answer.own !== null) for (const h of answer.own) own.push([h.name, h.value]);
  return encodeRecord(keptMeta(fp, answer, own), answer.body);
}

/** The headers in `now` that were not in `before`, in order (each added Set-Cookie line one entry). */
function added(before: HeaderBag | null, now: HeaderBag | null): [string, string][] {
  const out: [string, string][] = [];
  if (now === null) return out;
  for (const k in now) {
    const v = now[k]!;
    const was = before?.[k];
    if (Array.isArray(v)) {
      for (const line of v) if (!(Array.isArray(was) && was.includes(line))) out.push([k, line]);
    } else if (v !== was) out.push([k, v]);
  }
  return out;
}

/**
 * SHA-256 over method, path, query and the body, in one call (no Hash object per request): a JSON
 * object or array body as canonical JSON (keys sorted, see `canonicalBody`), any other body as its
 * raw bytes. The head and body are joined in a Buffer of the request's own (no scratch shared
 * between requests).
 */
export function fingerprint(p: RequestParts): string {
  const head = headOf(p);
  const json = canonicalBody(p.body);
  return json === null ? rawFingerprint(head, p.body) : canonicalFingerprint(head, json);
}

/**
 * Whether the request is the one a kept answer was made for: its fingerprint, or for a JSON body
 * also the raw one, which an earlier fw kept for every body. A retry of a request answered before
 * an upgrade, or by an instance not upgraded yet, still replays.
 */
export function fingerprintMatches(p: RequestParts, fp: string): boolean {
  const head = headOf(p);
  const json = canonicalBody(p.body);
  if (json !== null && canonicalFingerprint(head, json) === fp) return true;
  return rawFingerprint(head, p.body) === fp;
}

const headOf = (p: RequestParts): string => `${p.method}\0${p.path}\0${p.rawQuery}\0`;

const canonicalFingerprint = (head: string, json: string): string =>
  hash('sha256', `${head}\0${json}`, 'base64url');

function rawFingerprint(head: string, body: Buffer): string {
  const n = Buffer.byteLength(head);
  const all = Buffer.allocUnsafe(n + body.length);
  all.write(head, 0, 'utf8');
  all.set(body, n);
  return hash('sha256', all, 'base64url');
}
