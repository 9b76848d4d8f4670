import {
  Bytes,
  isHeaderList,
  type Contract,
  type HeaderEntry,
  type RedirectValue,
  type ReplyValue,
} from '../core/answers';
import { HttpError } from '../core/errors';
import { fail } from '../core/fail';
import { JSON_TYPE, OCTET_STREAM, TEXT_TYPE } from '../core/media-types';
import { compileWriter, spell } from '../../json';
import type { Encoder, EncoderExtensions } from '../route/extensions';

/**
 * Writes a handler's result as the contract says. `status` and `own` come from wrappers (Status, Reply).
 * Returns a promise when the answer is written asynchronously (files); wrappers pass it on.
 */

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
    case 'versioned':
      return baseStatus(contract.inner);
    default:
      return 200;
  }
}

/** Compiles a contract into the function that writes its answers, once, at build. */
export function compileEncoder(
  contract: Contract,
  label: string,
  extensions: EncoderExtensions,
): Encoder {
  switch (contract.kind) {
    case 'json': {
      // A type that reaches no JSON marker keeps the plain path; a marked one is spelled first (JSON-12).
      const spelled = compileWriter(contract.type);
      if (spelled === null)
        return (c, v, status, own) => c.write(status, JSON_TYPE, JSON.stringify(v) ?? 'null', own);
      return (c, v, status, own) =>
        c.write(status, JSON_TYPE, JSON.stringify(spelled(v)) ?? 'null', own);
    }
    case 'text':
      return (c, v, status, own) => c.write(status, TEXT_TYPE, String(v), own);
    case 'void':
      return (c, _v, _status, own) => c.write(204, null, null, own);
    case 'bytes':
      return (c, v, status, own) => {
        if (v instanceof Bytes)
          c.write(status, v.contentType, v.body, join(v.headers.entries, own));
        else if (v instanceof Uint8Array || typeof v === 'string')
          c.write(status, OCTET_STREAM, v, own);
        else throw new TypeError(`${label}: a Bytes route returned something other than Bytes`);
      };
    case 'self':
      return selfWriting(contract.type as unknown as SelfWriting);
    case 'status': {
      const inner = compileEncoder(contract.inner, label, extensions);
      const fixed = contract.status;
      return (c, v, _status, own) => inner(c, v, fixed, own);
    }
    case 'optional': {
      const inner = compileEncoder(contract.inner, label, extensions);
      return (c, v, status, own) => {
        if (v === null || v === undefined) throw fail.notFound();
        return inner(c, v, status, own);
      };
    }
    case 'reply': {
      const inner = compileEncoder(contract.inner, label, extensions);
      const variants = new Map(
        Object.entries(contract.variants ?? {}).map(([s, c]) => [
          Number(s),
          compileEncoder(c, label, extensions),
        ]),
      );
      return (c, v, _status, own) => {
        const r = v as ReplyValue<unknown>;
        const encode = variants.get(r.status) ?? inner;
        return encode(
          c,
          r.value,
          r.status,
          r.headers && isHeaderList(r.headers) ? join(r.headers.entries, own) : own,
        );
      };
    }
    case 'redirect': {
      const status = contract.status;
      return (c, v, _status, own) => {
        const r = v as RedirectValue;
        c.write(
          status,
          null,
          null,
          join([{ name: 'location', value: r.location }, ...r.headers.entries], own),
        );
      };
    }
    case 'events':
      // c.events() has sent the head by the time the handler returns; reaching here means it never did.
      return () => {
        throw new HttpError(
          'NotAnEventStream',
          `${label}: declared @Returns(EventStream) but finished without calling c.events()`,
        );
      };
    case 'versioned':
    case 'file': {
      const make = extensions[contract.kind];
      if (!make)
        throw new HttpError('Refusal', `${label}: ${contract.kind} answers are not available`);
      return make(contract, label, (inner) => compileEncoder(inner, label, extensions));
    }
  }
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
    c.write(status, contentType, Buffer.concat(chunks), own);
  };
}

/** Answers a result when the route declared no contract: by what came back (nothing → 204, text → text/plain, else JSON). */
export const inferred: Encoder = (c, v, _status, own) => {
  if (v === undefined || v === null) c.write(204, null, null, own);
  else if (typeof v === 'string') c.write(200, TEXT_TYPE, v, own);
  else if (v instanceof Bytes) c.write(200, v.contentType, v.body, join(v.headers.entries, own));
  else c.write(200, JSON_TYPE, JSON.stringify(spell(v)), own);
};

function join(
  a: readonly HeaderEntry[],
  b: readonly HeaderEntry[] | null,
): readonly HeaderEntry[] | null {
  if (b === null || b.length === 0) return a.length === 0 ? null : a;
  return a.length === 0 ? b : [...a, ...b];
}
