import type { Call } from './call';
import type { HeaderLine } from './header-line';
import type { FetchResponse } from './response';
import type { Scope } from './scope';
import type { SERVER_SIDE } from './server-side';

// The typed client's types are kept shallow on purpose: one conditional per parameter and one per
// answer variant, no walk over the value types (a 200-route client checks in about a second, see
// bench/client-types). The value a method yields is the handler's own declared type.

type Digit = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;
type ToNumber<T> = T extends `${infer N extends number}` ? N : never;
/** Every failure status, 400–599 (the failure branch of a result has these, minus the route's own answers). */
export type FailureStatus = ToNumber<`${4 | 5}${Digit}${Digit}`>;
/** What a route whose handler returns a bare value may answer: its `@Returns` fixes one, which types cannot see. */
export type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 205 | 206;

/** The options of one typed call: a `Call`, plus the idempotency key and the retry bounds. */
export interface ClientCall extends Call {
  /** Sent on every try, before the route's own header arguments and its `Idempotency-Key`. */
  readonly headers?: readonly HeaderLine[];
  /**
   * The whole logical call's deadline in ms, every try and every wait included. Default the
   * target's `timeoutMs`, else the client's; 0 (none) becomes 30 s for a retried call.
   */
  readonly timeoutMs?: number;
  /** One try's deadline, so a try that hangs is retried with time left. Default: what is left. */
  readonly tryTimeoutMs?: number;
  /** Tries in all, the first included (1 never retries). Default 5. */
  readonly attempts?: number;
  /** The `Idempotency-Key` of an `@Idempotent` route; default a new random UUID per logical call. */
  readonly idempotencyKey?: string;
}

/** A declared answer: its status and the value the handler returned, as JSON reads it back. */
export interface Answered<S extends number, V> {
  readonly status: S;
  readonly value: V;
  readonly failure: null;
  /** The key every try of an idempotent call carried (for logs); null for other routes. */
  readonly idempotencyKey: string | null;
  /** How many tries it took. */
  readonly attempts: number;
  /** The whole answer, for its headers (`Location`, `Idempotent-Replayed`). */
  readonly response: FetchResponse;
}

/** fw's failure body, read: the code when it carries one (`app.failures`, `Problem`), and its message. */
export interface ClientFailure {
  readonly code: string | null;
  readonly error: string;
  /** The body as parsed (JSON), or its text. */
  readonly body: unknown;
}

/** A failure answer (a 4xx or 5xx the route does not declare as its own value). */
export interface Failed<Declared extends number> {
  readonly status: Exclude<FailureStatus, Declared>;
  readonly value: undefined;
  readonly failure: ClientFailure;
  readonly idempotencyKey: string | null;
  readonly attempts: number;
  readonly response: FetchResponse;
}

/** What one call yields: a declared answer per status, or a failure; `switch (r.status)` tells them apart. */
export type ClientResult<A extends Answered<number, unknown>> = A | Failed<A['status']>;

/** A handler's value with a status of its own (`reply(409, x)`, `ReplyValue`). */
interface WithStatus {
  readonly status: number;
  readonly value: unknown;
}
/** A `Versioned` value (its ETag makes 304 an answer too). */
interface VersionedLike {
  readonly version: unknown;
  readonly unchanged: boolean;
  readonly value: unknown;
}
/** A class that writes itself (`text/csv` and the like): the client reads its text. */
interface SelfWriting {
  write(out: never): unknown;
}

/** The answers of a handler that resolves to `R` (distributes over a union of replies); a typed event stream's events arrive as they are sent. */
type Variants<R> =
  R extends AsyncIterable<infer E>
    ? Answered<200, AsyncIterableIterator<E>>
    : R extends WithStatus
      ? Answered<R['status'], R['value']>
      : R extends VersionedLike
        ? Answered<200, Exclude<R['value'], undefined>> | Answered<304, undefined>
        : R extends SelfWriting
          ? Answered<SuccessStatus, string>
          : Answered<SuccessStatus, R>;

/** The result type of a handler resolving to `R`: `void` answers 204, `null` (`Optional`) is a 404 failure. */
export type ResultOf<R> = [R] extends [void | undefined]
  ? ClientResult<Answered<204, undefined>>
  : ClientResult<Variants<NonNullable<R>>>;

/** True for a parameter the server fills (`SERVER_SIDE`-branded); `any` is kept. */
type FilledByServer<H> = 0 extends 1 & H
  ? false
  : typeof SERVER_SIDE extends keyof H
    ? true
    : false;

/** The handler's parameters without the server-filled ones, optional ones kept optional. */
export type ClientArgs<A extends readonly unknown[]> = number extends A['length']
  ? []
  : A extends readonly []
    ? []
    : A extends readonly [infer H, ...infer T]
      ? FilledByServer<H> extends true
        ? ClientArgs<T>
        : [H, ...ClientArgs<T>]
      : A extends readonly [(infer H)?, ...infer T]
        ? FilledByServer<H> extends true
          ? ClientArgs<T>
          : [H?, ...ClientArgs<T>]
        : [];

/** One handler as a client method: the scope first, the arguments the route reads, the call's options last. */
export type ClientMethod<F> = F extends (...args: infer A) => infer R
  ? (...args: [c: Scope, ...ClientArgs<A>, call?: ClientCall]) => Promise<ResultOf<Awaited<R>>>
  : never;

/**
 * The typed client of a controller: one method per handler, typed from the controller's own
 * declarations (`import type` is enough).
 */
export type ClientOf<C> = {
  readonly [K in keyof C as C[K] extends (...args: never[]) => unknown ? K : never]: ClientMethod<
    C[K]
  >;
};
