import { HttpError } from './errors';
import { OCTET_STREAM } from './media-types';

/** One header of a returned value. */
export interface HeaderEntry {
  readonly name: string;
  readonly value: string;
}

const HEADER_LIST = Symbol('fw.headers');
/** Headers carried by a returned value, built with `headers.of`; at most 8. */
export interface HeaderList {
  readonly [HEADER_LIST]: true;
  readonly entries: readonly HeaderEntry[];
}

export const MAX_RETURNED_HEADERS = 8;
type UpTo8 = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
/** A literal list of nine or more entries is a type error; a list built at run time is checked when built. */
type AtMost8<T extends readonly unknown[]> = number extends T['length']
  ? T
  : T['length'] extends UpTo8
    ? T
    : never;

/**
 * Builds the headers of a returned value (`Reply`, `Redirect.with`, `Bytes`, `FileBody`, `Versioned`).
 * @example return Redirect.with('/orders/7', headers.of([{ name: 'Cache-Control', value: 'no-store' }]))
 */
export const headers = Object.freeze({
  of<const T extends readonly HeaderEntry[]>(entries: AtMost8<T>): HeaderList {
    const list = entries as readonly HeaderEntry[];
    if (list.length > MAX_RETURNED_HEADERS) {
      throw new HttpError(
        'TooManyHeaders',
        `a returned value carries at most ${MAX_RETURNED_HEADERS} headers, got ${list.length}`,
      );
    }
    return Object.freeze({ [HEADER_LIST]: true as const, entries: Object.freeze([...list]) });
  },
  none: Object.freeze({
    [HEADER_LIST]: true as const,
    entries: Object.freeze([]) as readonly HeaderEntry[],
  }) as HeaderList,
});

export function isHeaderList(x: unknown): x is HeaderList {
  return typeof x === 'object' && x !== null && (x as HeaderList)[HEADER_LIST] === true;
}

// ---- Contracts: what @Returns(...) records. TypeScript erases generics, so the contract is a value.

export type RedirectStatus = 301 | 302 | 303 | 307 | 308;
export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

/** A class of the program's, or a scalar constructor. */
export type Shape = abstract new (...args: never[]) => unknown;

export type Contract =
  | { readonly kind: 'json'; readonly type: Shape | readonly [Shape] }
  | { readonly kind: 'text' }
  | { readonly kind: 'void' }
  | { readonly kind: 'bytes' }
  | { readonly kind: 'status'; readonly status: number; readonly inner: Contract }
  | { readonly kind: 'optional'; readonly inner: Contract }
  | {
      readonly kind: 'reply';
      readonly inner: Contract;
      readonly statuses: readonly number[];
      readonly variants: Readonly<Record<number, Contract>> | null;
    }
  | { readonly kind: 'redirect'; readonly status: number }
  | { readonly kind: 'versioned'; readonly inner: Contract }
  | { readonly kind: 'file' }
  | { readonly kind: 'events' }
  | { readonly kind: 'self'; readonly type: Shape };

const LEAF: readonly Contract[] = Object.freeze([]);

/**
 * The contracts nested directly in `contract`: a wrapper's inner one, every variant of a `Reply`
 * map (its `inner` is the first of them), none for a leaf. The one walk over the contract type:
 * a check that only has to reach every nested contract recurses through this, never by kind.
 */
export function innerContracts(contract: Contract): readonly Contract[] {
  switch (contract.kind) {
    case 'status':
    case 'optional':
    case 'versioned':
      return [contract.inner];
    case 'reply':
      return contract.variants === null ? [contract.inner] : Object.values(contract.variants);
    case 'json':
    case 'text':
    case 'void':
    case 'bytes':
    case 'redirect':
    case 'file':
    case 'events':
    case 'self':
      return LEAF;
  }
}

/** What `@Returns` accepts: a contract, a class, `String`, or `[Class]` for a JSON array. */
export type ContractLike = Contract | Shape | readonly [Shape];

const CONTRACT = Symbol('fw.contract');
type Tagged<C> = C & { readonly [CONTRACT]: true };
/** @internal marks a contract built by a capability's own helper (Versioned, FileBody) */
export const tag = <C extends Contract>(c: C): Tagged<C> =>
  Object.freeze({ ...c, [CONTRACT]: true as const }) as unknown as Tagged<C>;

/** @internal a class that stands for a contract of its own (`FileBody`) carries it under this key */
export const OWN_CONTRACT: unique symbol = Symbol('fw.ownContract');

export function isContract(x: unknown): x is Contract {
  return typeof x === 'object' && x !== null && (x as Tagged<Contract>)[CONTRACT] === true;
}

/** Bytes in memory sent as they are under their own content type. */
export class Bytes {
  constructor(
    readonly body: Uint8Array | string,
    readonly contentType = OCTET_STREAM,
    readonly headers: HeaderList = headersNone(),
  ) {}
}
function headersNone(): HeaderList {
  return headers.none;
}

/** Turns what `@Returns` was given into a contract (a class is JSON, `String` is text, a self-writing class writes itself). */
export function toContract(x: ContractLike): Contract {
  if (isContract(x)) return x;
  if (Array.isArray(x)) return tag({ kind: 'json', type: x as readonly [Shape] });
  if (x === String) return tag({ kind: 'text' });
  if (x === Bytes) return tag({ kind: 'bytes' });
  if (typeof x === 'function' && OWN_CONTRACT in x)
    return (x as unknown as { [OWN_CONTRACT]: Contract })[OWN_CONTRACT];
  if (
    typeof x === 'function' &&
    ('contentType' in x ||
      typeof (x as { prototype?: { write?: unknown } }).prototype?.write === 'function')
  ) {
    return tag({ kind: 'self', type: x as Shape });
  }
  return tag({ kind: 'json', type: x as Shape });
}

/** `T` answered with a fixed status. @example @Returns(Status(201, Order)) */
export function Status(status: number, inner: ContractLike): Contract {
  return tag({ kind: 'status', status, inner: toContract(inner) });
}

/** `T` or nothing: a `null` (or `undefined`) result answers 404. @example @Returns(Optional(Order)) */
export function Optional(inner: ContractLike): Contract {
  return tag({ kind: 'optional', inner: toContract(inner) });
}

/** The value a `Reply` route returns: status chosen at run time, headers, and the value. */
export interface ReplyValue<T> {
  readonly status: number;
  readonly headers?: HeaderList;
  readonly value: T;
}
/**
 * Status decided at run time, with headers. `statuses` lists what it may answer, for the API
 * description; a map gives each status its own type.
 * @example @Returns(Reply(Order, { statuses: [200, 202] }))
 * @example @Returns(Reply({ 200: Order, 409: AlreadyCancelled }))
 */
export function Reply(
  inner: ContractLike | Readonly<Record<number, ContractLike>>,
  options: { statuses?: readonly number[] } = {},
): Contract {
  if (typeof inner === 'object' && !Array.isArray(inner) && !isContract(inner)) {
    const map = inner as Readonly<Record<number, ContractLike>>;
    const statuses = Object.keys(map).map(Number);
    const variants = Object.freeze(
      Object.fromEntries(statuses.map((s) => [s, toContract(map[s])])),
    );
    return tag({
      kind: 'reply',
      inner: variants[statuses[0]],
      statuses: Object.freeze(statuses),
      variants,
    });
  }
  return tag({
    kind: 'reply',
    inner: toContract(inner as ContractLike),
    statuses: Object.freeze([...(options.statuses ?? [200])]),
    variants: null,
  });
}

/** The value a `Redirect` route returns. */
export interface RedirectValue {
  readonly location: string;
  readonly headers: HeaderList;
}
/**
 * A redirect with its status in the contract; no body.
 * @example @Returns(Redirect(301)) … return Redirect.to('/catalog')
 */
export function Redirect(status: RedirectStatus): Contract {
  return tag({ kind: 'redirect', status });
}
Redirect.to = (location: string): RedirectValue => ({ location, headers: headers.none });
Redirect.with = (location: string, list: HeaderList): RedirectValue => ({
  location,
  headers: list,
});
