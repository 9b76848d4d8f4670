import { HttpError } from './errors';
import { OCTET_STREAM } from './media-types';
import { isStandardSchema, type InferInput, type StandardSchema } from './standard-schema';

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

/** Headers written as a plain object, name to value: `{ Location: '/orders/7' }`; at most 8. */
export type HeaderRecord = { readonly [name: string]: string };
/**
 * The headers a returned value may carry (`reply`, `Reply`, `Redirect.with`, `Bytes`, `FileBody`,
 * `Versioned`): a plain object `{ Location: url }` or a list built with `headers.of([...])`.
 */
export type ReturnedHeaders = HeaderRecord | HeaderList;

export const MAX_RETURNED_HEADERS = 8;
/** What the type checker says when a literal carries a ninth header (eight is the most). */
export type TooManyHeaders =
  'a returned value carries at most 8 headers: drop one, or send it with c.setHeader';
type UpTo8 = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
/** A literal list of nine or more entries is a type error; a list built at run time is checked when built. */
type AtMost8<T extends readonly unknown[]> = number extends T['length']
  ? T
  : T['length'] extends UpTo8
    ? T
    : TooManyHeaders;

type Intersected<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;
type LastOf<U> = Intersected<U extends unknown ? () => U : never> extends () => infer L ? L : never;
/** How many names a literal header object has, counted up to 9 (a `string` index counts as one). */
type CountNames<K, N extends readonly unknown[] = []> = [K] extends [never]
  ? N['length']
  : N['length'] extends 9
    ? 9
    : CountNames<Exclude<K, LastOf<K>>, [...N, unknown]>;
/**
 * `H` when it is at most 8 headers, else the readable message; a list built at run time is checked
 * when used.
 */
export type AtMost8Headers<H> = H extends HeaderList
  ? H
  : CountNames<keyof H> extends 9
    ? TooManyHeaders
    : H;

/**
 * Builds the headers of a returned value (`Reply`, `Redirect.with`, `Bytes`, `FileBody`, `Versioned`).
 * A plain object `{ 'Cache-Control': 'no-store' }` does the same where a value is returned.
 * @example return Redirect.with('/orders/7', headers.of([{ name: 'Cache-Control', value: 'no-store' }]))
 */
export const headers = Object.freeze({
  of<const T extends readonly HeaderEntry[]>(entries: AtMost8<T>): HeaderList {
    return listOf(entries as readonly HeaderEntry[]);
  },
  none: Object.freeze({
    [HEADER_LIST]: true as const,
    entries: Object.freeze([]) as readonly HeaderEntry[],
  }) as HeaderList,
});

function listOf(list: readonly HeaderEntry[]): HeaderList {
  if (list.length > MAX_RETURNED_HEADERS) throw tooMany(list.length);
  return Object.freeze({ [HEADER_LIST]: true as const, entries: Object.freeze([...list]) });
}

const tooMany = (n: number): HttpError =>
  new HttpError(
    'TooManyHeaders',
    `a returned value carries at most ${MAX_RETURNED_HEADERS} headers, got ${n}`,
  );

export function isHeaderList(x: unknown): x is HeaderList {
  return typeof x === 'object' && x !== null && (x as HeaderList)[HEADER_LIST] === true;
}

/**
 * The entries of returned headers, read once where the value is answered: a `headers.of` list as
 * it is, a plain object `{ Name: 'value' }` checked (string values, at most 8). Anything else (a
 * plain array of entries, a string) is thrown (500, `UndeclaredAnswer`), never dropped: `where`
 * names the route.
 */
export function headerEntries(h: unknown, where: string): readonly HeaderEntry[] {
  if (h === undefined || h === null) return headers.none.entries;
  if (isHeaderList(h)) return h.entries;
  const proto: unknown = typeof h === 'object' ? Object.getPrototypeOf(h) : undefined;
  if (proto !== Object.prototype && proto !== null)
    throw new HttpError(
      'UndeclaredAnswer',
      `${where}: returned headers must be an object { Name: 'value' } or headers.of([...]), got ${Array.isArray(h) ? 'an array' : typeof h}`,
    );
  const names = Object.keys(h);
  if (names.length > MAX_RETURNED_HEADERS) throw tooMany(names.length);
  const entries: HeaderEntry[] = [];
  for (const name of names) {
    const value = (h as Record<string, unknown>)[name];
    if (typeof value !== 'string')
      throw new HttpError(
        'UndeclaredAnswer',
        `${where}: returned header ${JSON.stringify(name)} must be a string, got ${typeof value}`,
      );
    entries.push({ name, value });
  }
  return entries;
}

/** Returned headers as a list, checked when the value is built (`Redirect.with`, `Bytes`, `FileBody`, `Versioned`). */
export function toHeaderList(h: ReturnedHeaders | null | undefined, where: string): HeaderList {
  if (h === undefined || h === null) return headers.none;
  if (isHeaderList(h)) return h;
  return listOf(headerEntries(h, where));
}

// ---- Contracts: what @Returns(...) records. TypeScript erases generics, so the contract is a value;
// its type also carries the value its handler returns, which `@Returns` holds the handler to.

export type RedirectStatus = 301 | 302 | 303 | 307 | 308;
export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

/** A class of the program's, or a scalar constructor. */
export type Shape = abstract new (...args: never[]) => unknown;

declare const ANSWER: unique symbol;

/** The contract as the app reads it, by kind. */
export type ContractNode =
  | { readonly kind: 'json'; readonly type: Shape | readonly [Shape] }
  /** A Standard Schema answer (zod 4, valibot, arktype): its parsed output is what is written. */
  | { readonly kind: 'schema'; readonly schema: StandardSchema }
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
  /** A contract of a capability's own kind (`ownContract`): its encoder is the capability's. */
  | OwnContract
  /**
   * A server-sent event stream: untyped (`data` null, answered through `c.events()`), or typed
   * (`EventStream.of(T)`: the handler returns the events, each one's data written as `data` says).
   */
  | {
      readonly kind: 'events';
      readonly data: Contract | null;
      /** The `event:` line every event carries, or null for none (the client's `onmessage`). */
      readonly event: string | null;
      /** True when each item is `{ id, data }` and its `id:` line is sent. */
      readonly ids: boolean;
    }
  | { readonly kind: 'self'; readonly type: Shape };

/**
 * A contract of a kind fw's core does not know, made by a capability with `ownContract` and
 * answered by the encoder the capability registers under its `name` (`Capability.encoders`).
 * fw's `Versioned` and `FileBody` are two.
 */
export interface OwnContract {
  readonly kind: 'own';
  /** The kind's name: the key of its encoder, and how Refusals and the document name it (`FileBody`). */
  readonly name: string;
  /** The contract it wraps (the body's, as `Versioned(Order)` wraps `Order`), or null for a leaf. */
  readonly inner: Contract | null;
  /** Statuses it may answer beside its inner contract's (`Versioned`: 304), for the route's list of answers. */
  readonly statuses: readonly number[];
  /** Whether an idempotent route may keep it and replay it: its answer is whole once written. */
  readonly replayable: boolean;
}

/** What `ownContract` takes: the kind's name, and what it wraps, adds and allows. */
export interface OwnContractInit {
  readonly name: string;
  readonly inner?: Contract | null;
  readonly statuses?: readonly number[];
  /** Default false: an idempotent route refuses it (a file streamed, a 304 that depends on the request). */
  readonly replayable?: boolean;
}

/**
 * What `@Returns(...)` records. `V` is the value its handler returns (`Status(201, Order)` is a
 * `Contract<Order>`); it lives in the type only. A plain `Contract` holds the handler to nothing.
 */
export type Contract<V = unknown> = ContractNode & { readonly [ANSWER]?: () => V };

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
      return [contract.inner];
    case 'own':
      return contract.inner === null ? LEAF : [contract.inner];
    case 'reply':
      return contract.variants === null ? [contract.inner] : Object.values(contract.variants);
    case 'json':
    case 'schema':
    case 'text':
    case 'void':
    case 'bytes':
    case 'redirect':
    case 'events':
    case 'self':
      return LEAF;
  }
}

/** What `@Returns` accepts: a contract, a class, `String`, `[Class]` for a JSON array, or a Standard Schema. */
export type ContractLike = Contract | Shape | readonly [Shape] | StandardSchema;

const CONTRACT = Symbol('fw.contract');
type Tagged<C> = C & { readonly [CONTRACT]: true };
/** @internal marks a contract built by the core's own helpers (EventStream); a capability's is `ownContract` */
export const tag = <C extends Contract>(c: C): Tagged<C> =>
  Object.freeze({ ...c, [CONTRACT]: true as const }) as unknown as Tagged<C>;
/** @internal a contract built by the core, typed with the value its handler returns */
export const typed = <V>(c: ContractNode): Contract<V> => tag(c) as Contract<V>;

/**
 * A contract of a capability's own kind, typed with the value its handler returns (`V`). Answered
 * by the encoder the capability registers under `name` (`Capability.encoders`); a route declaring
 * it in an app without that capability is refused at build.
 * @example
 * export const Signed = <C extends ContractLike>(inner: C) =>
 *   ownContract<SignedValue<AnswerOf<C>>>({ name: 'Signed', inner: toContract(inner), replayable: true });
 */
export function ownContract<V = unknown>(init: OwnContractInit): Contract<V> {
  return typed<V>({
    kind: 'own',
    name: init.name,
    inner: init.inner ?? null,
    statuses: Object.freeze([...(init.statuses ?? [])]),
    replayable: init.replayable ?? false,
  });
}

/**
 * A class that stands for a contract of its own carries it under this key, so `@Returns(Class)`
 * is that contract and the handler returns instances (fw's `FileBody`).
 * @example class Signed { static readonly [OWN_CONTRACT] = ownContract<Signed>({ name: 'Signed' }) }
 */
export const OWN_CONTRACT: unique symbol = Symbol('fw.ownContract');

export function isContract(x: unknown): x is Contract {
  return typeof x === 'object' && x !== null && (x as Tagged<Contract>)[CONTRACT] === true;
}

/**
 * Bytes in memory sent as they are under their own content type, with up to 8 headers.
 * @example return new Bytes(png, 'image/png', { 'Cache-Control': 'max-age=60' })
 */
export class Bytes<H extends ReturnedHeaders = HeaderList> {
  readonly headers: HeaderList;
  constructor(
    readonly body: Uint8Array | string,
    readonly contentType = OCTET_STREAM,
    headers?: AtMost8Headers<H>,
  ) {
    this.headers = toHeaderList(headers as ReturnedHeaders | undefined, 'Bytes');
  }
}

/**
 * The value a handler returns under `@Returns(x)`: `Order` for `Order` or `Status(201, Order)`,
 * `readonly Order[]` for `[Order]`, `string` for `String`, `Order | null | undefined` for
 * `Optional(Order)`, a status-tied union for `Reply({ 200: A, 409: B })`, and what
 * `Redirect.to`, `Versioned.of` or `new FileBody` build for those (a class standing for its own
 * contract, as `FileBody`, answers its instances).
 */
export type AnswerOf<C> = C extends readonly [infer S]
  ? readonly InstanceOf<S>[]
  : C extends StandardSchema
    ? InferInput<C>
    : C extends Shape
      ? InstanceOf<C>
      : C extends { readonly [ANSWER]?: () => infer V }
        ? V
        : unknown;
type InstanceOf<S> = S extends StringConstructor
  ? string
  : S extends NumberConstructor
    ? number
    : S extends BooleanConstructor
      ? boolean
      : S extends typeof Bytes
        ? Bytes | Uint8Array | string
        : S extends abstract new (...args: never[]) => infer I
          ? I
          : never;

/** Turns what `@Returns` was given into a contract (a class is JSON, `String` is text, a self-writing class writes itself). */
export function toContract<const C extends ContractLike>(x: C): Contract<AnswerOf<C>>;
export function toContract(x: ContractLike): Contract {
  if (isContract(x)) return x;
  // Before the class checks: an arktype schema is a function.
  if (isStandardSchema(x)) return tag({ kind: 'schema', schema: x });
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

/** `T` answered with a fixed status: the handler returns `T`. @example @Returns(Status(201, Order)) */
export function Status<const C extends ContractLike>(
  status: number,
  inner: C,
): Contract<AnswerOf<C>> {
  return typed({ kind: 'status', status, inner: toContract(inner) });
}

/**
 * `T` or nothing: the handler returns `T`, `null` or `undefined`, and nothing answers 404.
 * @example @Returns(Optional(Order))
 */
export function Optional<const C extends ContractLike>(
  inner: C,
): Contract<AnswerOf<C> | null | undefined> {
  return typed({ kind: 'optional', inner: toContract(inner) });
}

/**
 * The value a `Reply` route returns: the status (one the contract declares), the value that status
 * carries, and up to 8 headers. `reply(status, value, headers)` builds one.
 */
export interface ReplyValue<T, S extends number = number> {
  readonly status: S;
  readonly headers?: ReturnedHeaders;
  readonly value: T;
}
/** What a `Reply({ 200: A, 409: B })` handler returns: each status with its own value type. */
export type ReplyOf<M> = {
  [K in keyof M]: ReplyValue<AnswerOf<M[K]>, K & number>;
}[keyof M];

/**
 * Status decided at run time, with headers. `statuses` lists what it may answer, for the API
 * description; a map gives each status its own type. The handler returns `reply(status, value)`.
 * @example @Returns(Reply(Order, { statuses: [200, 202] }))
 * @example @Returns(Reply({ 200: Order, 409: AlreadyCancelled }))
 */
export function Reply<const C extends ContractLike, const S extends number = 200>(
  inner: C,
  options?: { statuses?: readonly S[] },
): Contract<ReplyValue<AnswerOf<C>, S>>;
export function Reply<const M extends Readonly<Record<number, ContractLike>>>(
  variants: M,
): Contract<ReplyOf<M>>;
export function Reply(
  inner: ContractLike | Readonly<Record<number, ContractLike>>,
  options: { statuses?: readonly number[] } = {},
): Contract {
  if (
    typeof inner === 'object' &&
    !Array.isArray(inner) &&
    !isContract(inner) &&
    !isStandardSchema(inner)
  ) {
    const map = inner as Readonly<Record<number, ContractLike>>;
    const statuses = Object.keys(map).map(Number);
    const variants = Object.freeze(
      Object.fromEntries(statuses.map((s) => [s, toContract(map[s]!)])),
    );
    return tag({
      kind: 'reply',
      inner: variants[statuses[0]!]!,
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

/** What `reply(...)` builds: a `ReplyValue` whose headers are read already. */
export interface Replied<T, S extends number> extends ReplyValue<T, S> {
  readonly headers: HeaderList;
}
/**
 * The value of a `Reply` route, its status kept literal (no `as const`): `headers` a plain
 * object `{ Location: url }` or `headers.of([...])`, at most 8.
 * @example return reply(201, order, { Location: `/orders/${order.id}` })
 */
export function reply<S extends number, V, H extends ReturnedHeaders = HeaderList>(
  status: S,
  value: V,
  headers?: AtMost8Headers<H>,
): Replied<V, S> {
  return {
    status,
    value,
    headers: toHeaderList(headers as ReturnedHeaders | undefined, `reply(${status})`),
  };
}

const REDIRECT = Symbol('fw.redirect');
/** The value a `Redirect` route returns: only `Redirect.to` and `Redirect.with` build one. */
export interface RedirectValue {
  readonly [REDIRECT]: true;
  readonly location: string;
  readonly headers: HeaderList;
}
/**
 * A redirect with its status in the contract; no body. The handler returns `Redirect.to(url)`.
 * @example @Returns(Redirect(301)) … return Redirect.to('/catalog')
 */
export function Redirect(status: RedirectStatus): Contract<RedirectValue> {
  return typed({ kind: 'redirect', status });
}
Redirect.to = (location: string): RedirectValue => ({
  [REDIRECT]: true,
  location,
  headers: headers.none,
});
/** A redirect with up to 8 headers. @example Redirect.with('/orders/7', { 'Cache-Control': 'no-store' }) */
Redirect.with = <H extends ReturnedHeaders>(
  location: string,
  list: AtMost8Headers<H>,
): RedirectValue => ({
  [REDIRECT]: true,
  location,
  headers: toHeaderList(list as ReturnedHeaders, 'Redirect.with'),
});

/**
 * The contract of a route that answers nothing: 204, no body. An `async` handler without a
 * `@Returns` is refused at startup; this declares that it resolves to nothing.
 * @example @Post('/ping') @Returns(NoContent) async ping(): Promise<void> { await this.db.ping(); }
 */
export const NoContent: Contract<void | null | undefined> = typed({ kind: 'void' });
