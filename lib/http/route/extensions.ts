import type { Contract, HeaderEntry } from '../core/answers';
import type { FailureShape } from '../core/error-mapping';
import type { JsonSchemaOf } from '../core/standard-schema';
import type { Ctx } from '../request/ctx';
import type { JsonSchema } from '../schema';
import type { RouteRecord } from './route-record';

// The types a capability plugs into fw with, and the narrow host a built-in route talks to. Only
// types live here: the pipeline runs them, features implement them, the app fills them in, and
// none of those needs to import another's code to do so.

/** Middleware wraps every route, static tree and framework answer; the chain is put together once, at build. */
export type Middleware = (c: Ctx, next: () => Promise<void>) => void | Promise<void>;

/** What the app has provided, looked up by type at build. */
export interface Services {
  get(type: unknown): unknown;
  has(type: unknown): boolean;
  /** Every provided instance (to find opened spaces and targets). */
  all(): readonly unknown[];
}

/** A check the scanner runs on every route record; each problem it pushes is one Refusal line. */
export type RecordCheck = (record: RouteRecord, services: Services, problems: string[]) => void;

/**
 * A step wrapped around the route (idempotency, rate limits), built per route at build, or null
 * when the route does not need it. `proceed` works out the arguments, runs the handler and writes
 * its answer.
 */
export type Around = (c: Ctx, proceed: () => unknown) => unknown;
export type AroundFactory = (record: RouteRecord, services: Services) => Around | null;

/** Writes a handler's returned value as the route's answer. */
export type Encoder = (
  c: Ctx,
  value: unknown,
  status: number,
  own: readonly HeaderEntry[] | null,
) => void | Promise<void>;
/** Encoders for the contracts a capability owns, compiled once per route. */
export type EncoderExtensions = Partial<
  Record<
    'versioned' | 'file',
    (contract: Contract, label: string, compile: (inner: Contract) => Encoder) => Encoder
  >
>;

/** A header of a response, as OpenAPI describes it. */
export interface HeaderObject {
  readonly description?: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
  readonly example?: string;
}

/** A path, query or header parameter. */
export interface ParameterObject {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly description?: string;
  readonly required: boolean;
  readonly schema: JsonSchema;
}

/**
 * How a resolver that reads credentials declares itself in the OpenAPI document (a JWT resolver's
 * `static security`): the scheme's name under `components.securitySchemes` and its object.
 */
export interface SecurityDeclaration {
  readonly name: string;
  readonly scheme: Readonly<Record<string, unknown>>;
  /** The `WWW-Authenticate` of its 401 (the document's example). */
  readonly challenge: string;
}

/** What a capability may add to a route's OpenAPI operation. */
export interface OperationSink {
  /** The statuses the route answers with a body or without (its contract's, not its failures). */
  readonly answerStatuses: number[];
  parameter(p: ParameterObject): this;
  answer(
    status: number,
    response?: {
      description?: string;
      content?: Record<string, { schema: JsonSchema }>;
      headers?: Record<string, HeaderObject>;
    },
  ): this;
  failure(status: number, reason?: string, headers?: Record<string, HeaderObject>): this;
  /** Codes a failure of `status` may carry: an enum on the failure shape's `code` (issue 24 §3). */
  codes(status: number, codes: readonly string[]): this;
  header(status: number, name: string, header: HeaderObject): this;
  /** Marks the operation `deprecated: true`. */
  deprecated(): this;
  /** Sets an `x-` member of the operation (a value JSON can write). */
  extension(name: `x-${string}`, value: unknown): this;
  /** Requires a security scheme, with the scopes (OpenAPI 3.1: roles for a non-OAuth scheme) it needs. */
  security(scheme: 'bearer' | 'basic' | SecurityDeclaration, scopes?: readonly string[]): this;
}

/** A piece of the framework that a capability adds (idempotency, files, versioned answers), kept next to its own code. */
export interface Capability {
  readonly checks?: readonly RecordCheck[];
  readonly arounds?: readonly AroundFactory[];
  readonly encoders?: EncoderExtensions;
  /** Adds the capability's pieces to a route's OpenAPI operation (header parameters, extra answers, response headers). */
  readonly describe?: (record: RouteRecord, operation: OperationSink) => void;
  /**
   * True when the capability's `describe` gives the route's success answers itself (a WebSocket's
   * 101): the core then guesses none from the return type of a route without `@Returns`.
   */
  readonly answersItself?: (record: RouteRecord) => boolean;
}

/** What a built-in route (health, the OpenAPI document, the docs page, a static tree) needs of its app. */
export interface Host {
  readonly options: {
    readonly title?: string | undefined;
    readonly version?: string | undefined;
    readonly jsonSchemaOf?: JsonSchemaOf | undefined;
  };
  /** True once `close()` has begun. */
  readonly stopping: boolean;
  /** Everything provided, in order. */
  readonly provided: readonly unknown[];
  /** The route records served (and described), after build. */
  readonly routes: readonly RouteRecord[];
  readonly failureShape: FailureShape | null;
  /** Every capability of the framework, for the API description. */
  readonly capabilities: readonly Capability[];
  /** The version a request without a version header gets (header strategy), or null. */
  readonly defaultVersion?: string | null;
  log(line: string): void;
  /** Adds a route the framework owns. */
  addBuiltIn(record: RouteRecord, instance: object): void;
  /**
   * Runs at build, before the Refusals are thrown: each problem it pushes is one more line of the
   * app's one `RefusalError` (a static tree's missing directory, say).
   */
  atBuild(fn: (problems: string[]) => void): void;
  /** Runs after the routes are compiled. */
  afterBuild(fn: (host: Host) => void): void;
  /** Answers requests no route took, before 404/405; `false` when it does not take this one either. */
  addFallback(fn: (c: Ctx) => unknown): void;
}
