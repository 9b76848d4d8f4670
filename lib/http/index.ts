// The public door of `fw`. Nothing outside lib/http reaches into its other files.
import 'reflect-metadata';

export { type AppOptions, type Middleware } from './app/app';
export { App } from './app/defaults';
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
  type RouteOptions,
} from './route/decorators';
export {
  Idempotent,
  IDEMPOTENT,
  type IdempotentMark,
} from './features/idempotency/idempotent-mark';
export { RateLimit, RATE, type RateMark } from './features/rate-limit';
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
export { Ctx, type Resolvable } from './request/ctx';
export { Run } from './request/run';
export { fail } from './core/fail';
export { Failure, HttpError, RefusalError, HTTP_ERRORS, type HttpErrorCode } from './core/errors';
export { CodedError, type ErrorRow } from '../errors';
export type { FailureShape } from './core/error-mapping';
export type { Credentials, BearerCredentials, BasicCredentials } from './core/authorization';
export type { InjectOptions, InjectResult } from './app/inject';
export type { RouteRecord, ArgRecord } from './route/route-record';
export type { OpenApiDocument, OpenApiOptions, DocsOptions } from './features/openapi';
export { logger, type LoggerOptions } from './features/logger';
export { cors, type CorsOptions } from './features/cors';
export { Versioned, type Version, type VersionedValue } from './features/versioned';
export { BodyStream } from './request/body-stream';
export { Dir, type DirOptions } from './features/files/dir';
export { FileBody, type FileBodyInit } from './features/files/file-body';
export type { SendFileOptions } from './features/files/send-file';
export type { CompressOptions } from './features/compress';
export type { StaticOptions, EmbeddedOptions, EmbeddedEntry } from './features/static/static-tree';
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
export { Bound } from './core/bound';
export { EventStream, type ServerEvent } from './request/events';
export { Session, type SessionOptions, type SessionValue } from './features/sessions';
export type { CookieOptions } from './core/cookies';
export type { HealthOptions } from './features/health';
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
export type { LogLevel, LevelSetting, Logger as FwLogger } from './core/log';
export type { ErrorInfo } from './app/app';

// API versions and deprecation
export { ApiVersion, Deprecated } from './features/api-versions';
export type { VersionsOptions, DeprecatedOptions } from './features/api-versions';
// Uploads and body limits (issue 25)
export { FormFile, BodyLimit, type FileOptions } from './route/upload-decorators';
export {
  UploadedFile,
  StreamedFile,
  UPLOAD_DEFAULTS,
  type UploadLimits,
} from './request/uploaded-file';
// Who is calling (issue 26): JWT bearer resolvers and guards.
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
export type { SecurityDeclaration } from './route/extensions';
// Around the handler (issue 26): c.route, c.log, beforeHead and finished hooks.
export type { RouteInfo, Finished } from './request/ctx';
export { RequestLog } from './core/request-log';
// Browser-facing defaults (issue 26): security headers and the CSRF check of cookie-session routes.
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
// The declaration is the wire (issue 24): structured failures and the RFC 9457 shape.
export { Problem } from './core/problem';
export type { FailureFacts } from './core/error-mapping';
export type { FailureDetails, FailureInit } from './core/errors';
export { NoContent } from './core/answers';
export { Fails, type FailsEntry } from './features/declared-failures';
export { Page, type PageOf } from './core/page';
export type { Infer, StandardSchema, StandardIssue } from './core/standard-schema';
// Atomic idempotent routes on a PgStore: the claim, the handler's writes and the kept answer in one transaction (issue 23).
export { Tx } from './features/tx';
export type { TxClient, TxResult, TxPool, TxPoolClient, Isolation } from './features/tx';
export { IdempotencyInfo } from './request/idempotency-info';
// The typed client (issue 27 §1): the brand a typed client reads to leave server-filled parameters out.
export { SERVER_SIDE, type ServerSide } from '../fetch/server-side';
// A public capability API (issue 28 §2): what fw's own capabilities are made of, for a program's
// own. A capability (an object) is added with `app.use(capability)`; docs/guide.md, "Your own capability".
export { MarkKey, RouteMarks } from './route/mark-key';
export { markRoute } from './route/decorators';
export { builtInRecord, type BuiltInRoute } from './route/route-record';
export type {
  Capability,
  Host,
  Around,
  AroundFactory,
  RecordCheck,
  Services,
  OperationSink,
  HeaderObject,
  ParameterObject,
  AnswerCompressor,
  Encoder,
  EncoderExtensions,
} from './route/extensions';
// Standard Schema answers and queries: `@Returns(schema)`, `@Query(schema)` (issue 24 §5).
export type { InferInput, SchemaSide } from './core/standard-schema';
export type { JsonSchemaOf } from './core/standard-schema';
