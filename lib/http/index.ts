// The root door of `fw-http`: what a first app needs, at most 50 run-time names (spec/http/doors.spec.ts
// counts them). Grouped by topic; each other topic has a subpath door of its own, owned by one
// folder: fw-http/uploads, fw-http/files, fw-http/jwt, fw-http/ws, fw-http/browser,
// fw-http/atomic, fw-http/mcp, fw-http/openapi, fw-http/capabilities (and fw-http/cache,
// fw-http/fetch). Nothing outside lib/http reaches into its other files.
import 'reflect-metadata';

// The app: building, serving, requests in process (`app.inject`), and work outside a request.
export { App } from './app/defaults';
export type { AppOptions, Middleware, ProvideOptions, ErrorInfo } from './app/app';
export type { InjectResult } from './app/inject';
export type { InjectedRequest, InjectedAnswer } from './route/extensions';
export type { HealthOptions } from './features/health';
export { Run } from './request/run';

// Controllers and routes.
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
  type RouteOptions,
} from './route/decorators';

// A handler's arguments: the request's parts, validated; services by type or by `@Inject` key.
export { Body, Form, Query, Param, Header, Authorization, Inject } from './route/decorators';
export type { Credentials, BearerCredentials, BasicCredentials } from './core/authorization';
export { Bound } from './core/bound';
// Standard Schema bodies, queries and answers: `@Body(schema)`, `@Query(schema)`, `@Returns(schema)`.
export type { Infer, InferInput, SchemaSide, JsonSchemaOf } from './core/standard-schema';
export type { StandardSchema, StandardIssue } from './core/standard-schema';

// The request context: sending, headers, cookies, the request's log, hooks around the handler.
export { Ctx, type Resolvable, type RouteInfo, type Finished } from './request/ctx';
export type { RequestLog } from './core/request-log';
export type { BodyStream } from './request/body-stream';
export type { CookieOptions } from './core/cookies';

// Answers: the contracts `@Returns` declares, and their returned values.
export {
  Status,
  Optional,
  Reply,
  reply,
  Redirect,
  Bytes,
  headers,
  NoContent,
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
export { Page, type PageOf } from './core/page';
export { Versioned, type Version, type VersionedValue } from './features/versioned';
export {
  EventStream,
  type ServerEvent,
  type EventStreamOptions,
  type EventItem,
  type EventItems,
} from './request/events';

// How JSON is spelled: renamed fields, enums, tagged unions.
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

// Failures: `fail.*`, fw's own codes, the failure shape (RFC 9457's among them), what a route
// declares it may fail with, and the Refusals of a build.
export { fail } from './core/fail';
export { Failure, HttpError, RefusalError, HTTP_ERRORS, type HttpErrorCode } from './core/errors';
export type { FailureDetails, FailureInit } from './core/errors';
export { CodedError, type ErrorRow } from '../errors';
export { Problem } from './core/problem';
export type { FailureShape, FailureFacts } from './core/error-mapping';
export { Fails, type FailsEntry } from './features/declared-failures';

// Idempotent replay (atomic routes on Postgres: fw-http/atomic) and rate limits.
export { Idempotent } from './features/idempotency/idempotent-mark';
export type { IdempotencyInfo } from './request/idempotency-info';
export { RateLimit } from './features/rate-limit';

// Who may call: guards over any resolver (bearer JWTs: fw-http/jwt).
export { Guard, Requires } from './features/guards';

// Logs.
export { logger, type LoggerOptions } from './features/logger';
export type { LogLevel, LevelSetting, Logger as FwLogger } from './core/log';
