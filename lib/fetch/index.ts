/**
 * `fw-http/fetch`: the outbound HTTP client over undici — `Client` calls, typed `Target`s and the
 * streaming `Exchange`. This file is the module's only public door; it never imports `fw`.
 */
export { Client } from './client';
export type { ClientSettings, ResolvedClientSettings } from './client-settings';
export { CLIENT_DEFAULTS } from './client-settings';
export type { StartMode } from './engine';
export type { Call, BodyBytes, JsonValue } from './call';
export { FetchResponse } from './response';
export type { JsonClass } from './response';
export { ResponseHead } from './head';
export type { HeaderLine } from './header-line';
export { Exchange } from './exchange';
export type { ExchangeArgs, RequestBody } from './exchange';
export type { RedirectPolicy } from './fetch-head';
export { MAX_REDIRECTS } from './fetch-head';
export { Target, TargetType, OpenTarget } from './target';
export type { TargetOptions, OpenOptions, ArgsThenCall } from './target';
export type { PathArgs, TemplateNames, TemplatePositions, TemplateIsPlain } from './path-template';
export { withQuery } from './with-query';
export type { Scalar, QueryValue, QueryParams } from './with-query';
export { FetchError, FETCH_ERRORS, isFetchError } from './errors';
export type { FetchErrorCode } from './errors';
export { CodedError, type ErrorRow } from '../errors';
export type { Scope, OutboundCall } from './scope';
export type { KeyReusedAnswer } from './key-reused';

// Retries on Targets
export { RETRY_ON, retryAfterMs } from './retry-policy';
export type { RetryOptions } from './retry-policy';

// The typed client
export { clientOf } from './client-of';
export type { ClientOfOptions, ClientDocument } from './client-of';
export { SERVER_SIDE } from './server-side';
export type { ServerSide } from './server-side';
export { CLIENT_ATTEMPTS, CLIENT_DEADLINE_MS } from './keyed-retry';
export type {
  ClientOf,
  ClientMethod,
  ClientArgs,
  ClientCall,
  ClientResult,
  ClientFailure,
  ResultOf,
  Answered,
  Failed,
  FailureStatus,
  SuccessStatus,
} from './client-types';
