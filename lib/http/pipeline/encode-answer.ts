import {
  Bytes,
  headerEntries,
  type Contract,
  type HeaderEntry,
  type RedirectValue,
  type ReplyValue,
} from '../core/answers';
import { HttpError } from '../core/errors';
import { fail } from '../core/fail';
import { OCTET_STREAM, TEXT_TYPE } from '../core/media-types';
import type { Encoder, EncoderExtensions } from '../route/extensions';
import { declaredWriter } from './declared-writer';
import { schemaEncoder } from './schema-encoder';
import { eventEncoder } from './event-encoder';
import { exchangeOf } from '../request/exchange-of';

/** The status a contract answers when nothing wraps it. */
export function baseStatus(contract: Contract): number {
  switch (contract.kind) {
    case 'void':
      return 204;
    case 'status':
      return contract.status;
    case 'redirect':
      return contract.status;
    case 'optional':
      return baseStatus(contract.inner);
    case 'own':
      return contract.inner === null ? 200 : baseStatus(contract.inner);
    default:
      return 200;
  }
}

/** Told each undeclared field an answer left out (`PublicUser.passwordHash`), once per route and field. */
export type DroppedField = (label: string, field: string) => void;

/**
 * Compiles a contract into the function that writes its answers, once, at build: it writes a
 * handler's result as the contract says, `status` and `own` coming from wrappers (Status, Reply).
 * It returns a promise when the answer is written asynchronously (files); wrappers pass it on.
 */
export function compileEncoder(
  contract: Contract,
  label: string,
  extensions: EncoderExtensions,
  dropped: DroppedField | null = null,
): Encoder {
  const compileInner = (inner: Contract): Encoder =>
    compileEncoder(inner, label, extensions, dropped);
  switch (contract.kind) {
    case 'json':
      return jsonEncoder(contract.type, label, dropped);
    case 'schema':
      return schemaEncoder(contract.schema, label);
    case 'text':
      return (c, v, status, own) => exchangeOf(c).write(status, TEXT_TYPE, String(v), own);
    case 'void':
      return (c, _v, _status, own) => exchangeOf(c).write(204, null, null, own);
    case 'bytes':
      return bytesEncoder(label);
    case 'self':
      return selfWriting(contract.type as unknown as SelfWriting);
    case 'status': {
      const inner = compileInner(contract.inner);
      const fixed = contract.status;
      return (c, v, _status, own) => inner(c, v, fixed, own);
    }
    case 'optional': {
      const inner = compileInner(contract.inner);
      return (c, v, status, own) => {
        if (v === null || v === undefined) throw fail.notFound();
        return inner(c, v, status, own);
      };
    }
    case 'reply':
      return replyEncoder(contract, label, compileInner);
    case 'redirect':
      return redirectEncoder(contract.status);
    case 'events':
      return contract.data === null ? noEventStream(label) : eventEncoder(contract, label, dropped);
    case 'own': {
      const make = Object.hasOwn(extensions, contract.name) ? extensions[contract.name] : undefined;
      if (make === undefined)
        throw new HttpError(
          'Refusal',
          `${label}: ${contract.name} answers are not available: no capability added with app.use() encodes them`,
        );
      return make(contract, label, compileInner);
    }
  }
}

/** `Bytes` with its own type and headers, or raw bytes (or text) as application/octet-stream. */
function bytesEncoder(label: string): Encoder {
  return (c, v, status, own) => {
    if (v instanceof Bytes)
      exchangeOf(c).write(status, v.contentType, v.body, join(v.headers.entries, own));
    else if (v instanceof Uint8Array || typeof v === 'string')
      exchangeOf(c).write(status, OCTET_STREAM, v, own);
    else throw new TypeError(`${label}: a Bytes route returned something other than Bytes`);
  };
}

/** A `Reply` answer: its value written by the encoder of the status it names. */
function replyEncoder(
  contract: Extract<Contract, { kind: 'reply' }>,
  label: string,
  compileInner: (inner: Contract) => Encoder,
): Encoder {
  const inner = compileInner(contract.inner);
  const variants = new Map(
    Object.entries(contract.variants ?? {}).map(([s, c]) => [Number(s), compileInner(c)]),
  );
  // Checked here, on the compiled path: a status the contract does not list never goes out,
  // and a bare value is named rather than written as a wrapper.
  const declared = new Set(contract.statuses);
  const listed = contract.statuses.join(', ');
  return (c, v, _status, own) => {
    if (!isReplyValue(v))
      throw new HttpError(
        'UndeclaredAnswer',
        `${label}: a Reply route returned ${describe(v)}, not { status, value }: return { status: ${contract.statuses[0]}, value }`,
      );
    const r = v as ReplyValue<unknown>;
    if (!declared.has(r.status))
      throw new HttpError(
        'UndeclaredAnswer',
        `${label}: answered ${String(r.status)}, which its @Returns(Reply(...)) does not declare (${listed}): add it to the Reply or answer a declared status`,
      );
    const encode = variants.get(r.status) ?? inner;
    return encode(
      c,
      r.value,
      r.status,
      r.headers === undefined ? own : join(headerEntries(r.headers, label), own),
    );
  };
}

/** A redirect: no body, its Location first, then its own headers and the wrappers'. */
function redirectEncoder(status: number): Encoder {
  return (c, v, _status, own) => {
    const r = v as RedirectValue;
    exchangeOf(c).write(
      status,
      null,
      null,
      join([{ name: 'location', value: r.location }, ...r.headers.entries], own),
    );
  };
}

/** c.events() has sent the head by the time the handler returns; reaching here means it never did. */
function noEventStream(label: string): Encoder {
  return () => {
    throw new HttpError(
      'NotAnEventStream',
      `${label}: declared @Returns(EventStream) but finished without calling c.events()`,
    );
  };
}

/** A JSON answer of a declared type, written by the route's declared writer: only declared fields leave the server. */
function jsonEncoder(
  type: Extract<Contract, { kind: 'json' }>['type'],
  label: string,
  dropped: DroppedField | null,
): Encoder {
  const writer = declaredWriter(type, {
    label,
    dropped: dropped === null ? null : (field) => dropped(label, field),
  });
  return (c, v, status, own) => writer.answer(c, v, status, own);
}

/** A class that writes its own body under its own content type. */
export interface SelfWriting {
  readonly contentType: string;
  new (...args: never[]): { write(out: { write(chunk: string | Uint8Array): void }): void };
}

function selfWriting(type: SelfWriting): Encoder {
  const contentType = type.contentType;
  return (c, v, status, own) => {
    const chunks: Buffer[] = [];
    const out = {
      write: (chunk: string | Uint8Array) =>
        void chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk)),
    };
    (v as InstanceType<SelfWriting>).write(out);
    exchangeOf(c).write(status, contentType, Buffer.concat(chunks), own);
  };
}

/**
 * Answers a route that declared no contract: 204, as its document says. A value returned there
 * would answer something the document does not describe, so it is a 500 naming the route.
 */
export function undeclared(label: string): Encoder {
  return (c, v, _status, own) => {
    if (v === undefined || v === null) return exchangeOf(c).write(204, null, null, own);
    throw new HttpError(
      'UndeclaredAnswer',
      `${label}: returned ${describe(v)} but declares no @Returns, so it answers 204: declare @Returns(...) or return nothing`,
    );
  };
}

/** A `Reply` route's value: a numeric status and a value (headers optional). */
function isReplyValue(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { status?: unknown }).status === 'number' &&
    'value' in v
  );
}

/** What came back, for a message: its class or its type, never its content. */
function describe(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v !== 'object') return `a ${typeof v}`;
  if (Array.isArray(v)) return 'an array';
  const name = (v as object).constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

function join(
  a: readonly HeaderEntry[],
  b: readonly HeaderEntry[] | null,
): readonly HeaderEntry[] | null {
  if (b === null || b.length === 0) return a.length === 0 ? null : a;
  return a.length === 0 ? b : [...a, ...b];
}
