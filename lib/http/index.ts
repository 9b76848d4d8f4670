// The public door of `fw`. Nothing outside lib/http reaches into its other files. Grouped as the
// guide is: the app, routes and their arguments, answers, failures, idempotency, who is calling,
// realtime, operating it, and the parts a program's own capability is made of.
import 'reflect-metadata';

// The app: building, serving, testing without a socket, and work outside a request.
export { type AppOptions, type Middleware, type ProvideOptions } from './app/app';
export { App } from './app/defaults';
export type { ErrorInfo } from './app/app';
export type { InjectOptions, InjectResult } from './app/inject';
export { Run } from './request/run';

// Controllers, routes and their arguments.
export {
  Controller,
  Get,
  Post,
  Put,
  Patch,
  Delete,
  Head,
  Options,
  Returns,
  type HandlerReturning,
  Body,
  Form,
  Query,
  Param,
  Header,
  Authorization,
  Inject,
  type RouteOptions,
} from './route/decorators';
export { Ctx, type Resolvable } from './request/ctx';
// Around the handler: c.route, c.log, beforeHead and finished hooks.
export type { RouteInfo, Finished } from './request/ctx';
export { RequestLog } from './core/request-log';
export type { Credentials, BearerCredentials, BasicCredentials } from './core/authorization';
export { Bound } from './core/bound';
export { BodyStream } from './request/body-stream';
// Standard Schema bodies, queries and answers: `@Body(schema)`, `@Query(schema)`, `@Returns(schema)`.
export type { Infer, StandardSchema, StandardIssue } from './core/standard-schema';
export type { InferInput, SchemaSide } from './core/standard-schema';
export type { JsonSchemaOf } from './core/standard-schema';
// Uploads and body limits.
export { FormFile, BodyLimit, type FileOptions } from './route/upload-decorators';
export {
  UploadedFile,
  StreamedFile,
  UPLOAD_DEFAULTS,
  type UploadLimits,
} from './request/uploaded-file';

// Answers: the contracts `@Returns` declares, and how JSON is spelled.
export {
  Status,
  Optional,
  Reply,
  reply,
  Redirect,
  Bytes,
  headers,
  type AnswerOf,
  type HeaderEntry,
  type HeaderList,
  type HeaderRecord,
  type ReturnedHeaders,
  type TooManyHeaders,
  type ReplyValue,
  type ReplyOf,
  type RedirectValue,
  type RedirectStatus,
  type Contract,
  type ContractLike,
} from './core/answers';
export { NoContent } from './core/answers';
export { Page, type PageOf } from './core/page';
export { Versioned, type Version, type VersionedValue } from './features/versioned';
export {
  Json,
  jsonEnum,
  Union,
  type JsonOptions,
  type JsonEnumOptions,
  type RenameAll,
  type UnionType,
  type UnitVariant,
} from '../json';
// Files and static trees.
export { Dir, type DirOptions } from './features/files/dir';
export { FileBody, type FileBodyInit } from './features/files/file-body';
export type { SendFileOptions } from './features/files/send-file';
export type { CompressOptions } from './features/compress';
export type { StaticOptions, EmbeddedOptions, EmbeddedEntry } from './features/static/static-tree';

// Failures: codes, details, the failure shape (RFC 9457's among them) and what a route declares.
export { fail } from './core/fail';
export { Failure, HttpError, RefusalError, HTTP_ERRORS, type HttpErrorCode } from './core/errors';
export { CodedError, type ErrorRow } from '../errors';
export type { FailureShape } from './core/error-mapping';
export { Problem } from './core/problem';
export type { FailureFacts } from './core/error-mapping';
export type { FailureDetails, FailureInit } from './core/errors';
export { Fails, type FailsEntry } from './features/declared-failures';

// Idempotency and rate limits. Atomic routes on a PgStore: the claim, the handler's writes (its
// `Tx`) and the kept answer in one transaction.
export {
  Idempotent,
  IDEMPOTENT,
  type IdempotentMark,
} from './features/idempotency/idempotent-mark';
export { Tx } from './features/tx';
export type { TxClient, TxResult, TxPool, TxPoolClient, Isolation } from './features/tx';
export { IdempotencyInfo } from './request/idempotency-info';
export { RateLimit, RATE, type RateMark } from './features/rate-limit';

// Who is calling: JWT bearer resolvers and guards.
export {
  Bearer,
  JwtCaller,
  MAX_TOKEN_BYTES,
  type JwtClaims,
  type JwtOptions,
  type JwtResolver,
} from './features/jwt/bearer-jwt';
export { JWKS_DEFAULTS, type RemoteKeyOptions } from './features/jwt/remote-key-options';
export { Guard, Requires, GUARD, type GuardMark, type GuardEntry } from './features/guards';

// Routes as tools for AI agents (MCP).
export {
  Tool,
  TOOL,
  MCP_VERSIONS,
  mcpServer,
  type ToolOptions,
  type McpOptions,
  type ToolDefinition,
  type CallToolResult,
} from './features/mcp';
export type { SecurityDeclaration } from './route/extensions';
// Browser-facing defaults: security headers and the CSRF check of cookie-session routes.
export {
  securityHeaders,
  SecurityHeaders,
  AllowCrossSite,
  RequireCsrfToken,
  csrfToken,
  CSRF_COOKIE,
  BROWSER,
  type SecurityHeadersOptions,
  type BrowserMark,
} from './features/browser-defaults';
export { Session, type SessionOptions, type SessionValue } from './features/sessions';
export type { CookieOptions } from './core/cookies';

// Realtime: event streams and WebSockets.
export {
  EventStream,
  type ServerEvent,
  type EventStreamOptions,
  type EventItem,
  type EventItems,
} from './request/events';
export {
  WebSocketRoute,
  UPGRADE,
  WEBSOCKET_DEFAULTS,
  type WebSocketOptions,
  type OriginRule,
  type UpgradeMark,
  type UpgradeLoop,
  type WebSocketLimits,
} from './features/websocket';

// Operating it: logs, CORS, health, the OpenAPI document, API versions and deprecation.
export { logger, type LoggerOptions } from './features/logger';
export type { LogLevel, LevelSetting, Logger as FwLogger } from './core/log';
export { cors, type CorsOptions } from './features/cors';
export type { HealthOptions } from './features/health';
export type { OpenApiDocument, OpenApiOptions, DocsOptions } from './features/openapi';
export { ApiVersion, Deprecated } from './features/api-versions';
export type { VersionsOptions, DeprecatedOptions } from './features/api-versions';

// The typed client (fw-http/fetch's `clientOf`) reads this brand to leave the parameters the
// server fills out of its methods.
export { SERVER_SIDE, type ServerSide } from '../fetch/server-side';

// A program's own capability is made of what fw's own are: a capability (an object) is added with
// `app.use(capability)`; docs/guide/index.md, "Your own capability".
export type { RouteRecord, ArgRecord } from './route/route-record';
export { MarkKey, RouteMarks } from './route/mark-key';
export { markRoute } from './route/decorators';
export { builtInRecord, type BuiltInRoute } from './route/route-record';
export type {
  Capability,
  Host,
  InjectedRequest,
  InjectedAnswer,
  Around,
  AroundFactory,
  RecordCheck,
  Services,
  OperationSink,
  HeaderObject,
  MediaTypeObject,
  ParameterObject,
  AnswerCompressor,
  Encoder,
  EncoderExtensions,
} from './route/extensions';
