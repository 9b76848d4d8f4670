import type { Contract, HeaderEntry, OwnContract } from '../core/answers';
import type { FailureShape } from '../core/error-mapping';
import type { HeaderBag } from '../core/header-rules';
import type { JsonSchemaOf } from '../core/standard-schema';
import type { Ctx } from '../request/ctx';
import type { JsonSchema } from '../schema';
import type { RouteRecord } from './route-record';

// The types a capability plugs into fw with, and the host it registers app-level pieces on. Only
// types live here: the pipeline runs them, features implement them, the app fills them in, and
// none of those needs to import another's code to do so. They are public (`fw-http` exports them):
// fw's own capabilities and a program's are added the same way, with `app.use(capability)`.

/** Middleware wraps every route, static tree and framework answer; the chain is put together once, at build. */
export type Middleware = (c: Ctx, next: () => Promise<void>) => void | Promise<void>;

/** What the app has provided, looked up by type (or by an `app.provide(x, { as })` key) at build. */
export interface Services {
  /** The one instance provided as `type`; undefined when none is, or several are. */
  get(type: unknown): unknown;
  has(type: unknown): boolean;
  /** Every instance provided as `type`: by its class or a base class, or under `as`. */
  of(type: unknown): readonly unknown[];
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
/**
 * Compiles the encoder of one route's contract of a capability's own kind, once, at build:
 * `compile` gives the encoder of its inner contract (`contract.inner`), `label` names the route.
 */
export type OwnEncoder = (
  contract: OwnContract,
  label: string,
  compile: (inner: Contract) => Encoder,
) => Encoder;
/** The encoders of the contract kinds capabilities own (`ownContract`), by the kind's name. */
export type EncoderExtensions = Readonly<Record<string, OwnEncoder>>;

/** A header of a response, as OpenAPI describes it. */
export interface HeaderObject {
  readonly description?: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
  readonly example?: string;
}

/**
 * How one media type of an answer is described: `schema` the whole body, or (OpenAPI 3.2) for a
 * sequential media type such as `text/event-stream`, `itemSchema` each item of it.
 */
export type MediaTypeObject =
  | { readonly schema: JsonSchema; readonly itemSchema?: JsonSchema }
  | { readonly schema?: JsonSchema; readonly itemSchema: JsonSchema };

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

/**
 * What a capability may add to a route's OpenAPI operation: every member of an OpenAPI 3.2
 * operation but `operationId` (the route's), `callbacks` and `servers` (an `x-` member can carry
 * anything else a tool reads).
 */
export interface OperationSink {
  /** The statuses the route answers with a body or without (its contract's, not its failures). */
  readonly answerStatuses: number[];
  /** Adds a tag after the route's own (its controller's). */
  tag(name: string): this;
  /** Replaces the route's summary. */
  summary(text: string): this;
  /** Sets the operation's description (CommonMark). */
  description(text: string): this;
  /** Points to documentation elsewhere. */
  externalDocs(docs: { readonly url: string; readonly description?: string }): this;
  /** Adds (or, by name and place, replaces) a path, query or header parameter. */
  parameter(p: ParameterObject): this;
  /** Sets the request body (the core sets a `@Body`'s or `@Form`'s; a capability reading its own body sets it here). */
  body(
    schema: JsonSchema,
    options?: {
      contentType?: string;
      required?: boolean;
      encoding?: Record<string, { contentType: string }>;
    },
  ): this;
  /** Lists an answer that is not a failure; `content` omitted means no body. Replaces an earlier one of that status. */
  answer(
    status: number,
    response?: {
      description?: string;
      content?: Record<string, MediaTypeObject>;
      headers?: Record<string, HeaderObject>;
    },
  ): this;
  /** Lists a failure answer (the app's failure shape), with a reason added to its description. */
  failure(status: number, reason?: string, headers?: Record<string, HeaderObject>): this;
  /** Codes a failure of `status` may carry: an enum on the failure shape's `code`. */
  codes(status: number, codes: readonly string[]): this;
  /** Adds a response header to the answer of `status`. */
  header(status: number, name: string, header: HeaderObject): this;
  /** Marks the operation `deprecated: true`. */
  deprecated(): this;
  /** Sets an `x-` member of the operation (a value JSON can write). */
  extension(name: `x-${string}`, value: unknown): this;
  /** Requires a security scheme, with the scopes (since OpenAPI 3.1: roles for a non-OAuth scheme) it needs. */
  security(scheme: 'bearer' | 'basic' | SecurityDeclaration, scopes?: readonly string[]): this;
}

/**
 * A piece of the framework added to an app with `app.use(capability)`: fw's own (idempotency,
 * rate limits, health, the OpenAPI document, static trees, compression, sessions) and a program's
 * are the same kind of object. Every member is optional. Route-level members (`checks`, `arounds`,
 * `encoders`, `describe`) apply to every route whose record the capability recognises, usually by
 * the mark its decorator left (`record.marks.get(KEY)`); `register` adds app-level pieces.
 * @example
 * const AUDIT = new MarkKey<string>('audit');
 * export const Audit = (action: string) => markRoute(AUDIT, action);
 * export const audit: Capability = {
 *   name: 'audit',
 *   arounds: [(record) => { const action = record.marks.get(AUDIT); return action === undefined ? null : (c, proceed) => { log(action); return proceed(); }; }],
 *   describe: (record, op) => { const action = record.marks.get(AUDIT); if (action !== undefined) op.extension('x-audit', action); },
 * };
 * app.use(audit);
 */
export interface Capability {
  /** Names the capability in the app's messages (`app.use()` of one twice, say). */
  readonly name?: string;
  /** Checks run on every route record at build; each problem pushed is one line of the app's `RefusalError`. */
  readonly checks?: readonly RecordCheck[];
  /**
   * Steps wrapped around routes, one factory per step, asked once per route at build (null: the
   * route does not need it). fw's own wrap outermost, in its fixed order (versions, WebSocket
   * handshakes, rate limits, browser checks, guards, idempotency, …); a program's wrap inside
   * them, in `app.use` order, the first outermost.
   */
  readonly arounds?: readonly AroundFactory[];
  /** Encoders of the contract kinds a capability owns (`ownContract`), by the kind's name: one capability per name (fw's `FileBody`, `Versioned`). */
  readonly encoders?: EncoderExtensions;
  /** Adds the capability's pieces to a route's OpenAPI operation (header parameters, extra answers, response headers, `deprecated`, security, `x-` members). */
  readonly describe?: (record: RouteRecord, operation: OperationSink) => void;
  /**
   * True when the capability's `describe` gives the route's success answers itself (a WebSocket's
   * 101): the core then guesses none from the return type of a route without `@Returns`.
   */
  readonly answersItself?: (record: RouteRecord) => boolean;
  /**
   * Adds app-level pieces (routes of its own, a fallback for requests no route takes, build hooks,
   * the answer compressor, what it provides): called once, by `app.use(capability)`. A problem with the
   * capability's own options is thrown from here, so it surfaces at the `use` call.
   */
  readonly register?: (host: Host) => void;
}

/** Compresses a finished, buffered answer body when the app and the request allow it; may add headers (`Vary`, `Content-Encoding`). */
export type AnswerCompressor = (
  c: Ctx,
  bag: HeaderBag,
  type: string,
  body: Uint8Array | string,
) => Uint8Array | string;

/**
 * The app as a capability's `register` sees it: what it may read (the options, what was provided,
 * the routes once built) and where it adds app-level pieces. fw's health route, OpenAPI document,
 * docs page, static trees, compression and sessions use nothing else.
 */
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
  /** Every capability of the app, fw's and the program's, in the order their steps wrap a handler (the API description asks each to describe routes). */
  readonly capabilities: readonly Capability[];
  /** The version a request without a version header gets (header strategy), or null. */
  readonly defaultVersion?: string | null;
  log(line: string): void;
  /**
   * Provides an instance to the app, as `app.provide` does: controllers get it by type (or `as`
   * key), and a resolver or middleware reads it with `c.provided(type)` (sessions keep their
   * settings so).
   */
  provide(instance: object, options?: { readonly as?: object }): void;
  /**
   * Adds a route the capability owns: its record (made with `builtInRecord`) and the instance whose
   * `record.key` method answers it. It is served and described like a controller's route.
   */
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
  /** Compresses the app's buffered answers with `step` (`app.compress()`); the last one set is used. */
  compressAnswers(step: AnswerCompressor): void;
  /**
   * Sends a request through the app's whole pipeline without a socket (middleware, routing, the
   * route's steps, failures) and gives its answer: how a capability serving the app's routes over
   * another protocol (MCP tools) runs them exactly as HTTP would.
   */
  inject(request: InjectedRequest): Promise<InjectedAnswer>;
}

/** A request a capability sends through the app (`host.inject`). */
export interface InjectedRequest {
  readonly method?: string;
  /** Path and query, e.g. `/orders?limit=3`. */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Text or bytes as sent; any other value is sent as JSON (with `Content-Type: application/json` unless given). */
  readonly body?: string | Uint8Array | object;
  /** The peer the request seems to come from (`c.ip` reads it, through trusted proxies' headers). Default 127.0.0.1. */
  readonly remoteAddress?: string;
  /** True when the request seems to come over TLS (`c.protocol` is then `https`). Default false. */
  readonly encrypted?: boolean;
}

/** The answer to an injected request. */
export interface InjectedAnswer {
  readonly status: number;
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: string;
}
