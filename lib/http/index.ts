// The public door of `fw`. Nothing outside lib/http reaches into its other files.
import 'reflect-metadata';

export { App, type AppOptions, type Middleware } from './app';
export { Controller, Get, Post, Put, Patch, Delete, Head, Options, Returns, Idempotent, RateLimit, Body, Form, Query, Param, Header, Authorization, type RouteOptions } from './decorators';
export { Status, Optional, Reply, Redirect, Bytes, headers, type HeaderEntry, type HeaderList, type ReplyValue, type RedirectValue, type RedirectStatus, type Contract, type ContractLike } from './answers';
export { Ctx, type Resolvable } from './ctx';
export { Run } from './run';
export { fail, Failure } from './fail';
export { HttpError, RefusalError, HTTP_ERRORS, type HttpErrorCode } from './errors';
export type { FailureShape } from './failure-shape';
export type { Credentials, BearerCredentials, BasicCredentials } from './authorization';
export type { InjectOptions, InjectResult } from './inject';
export type { RouteRecord, ArgRecord } from './route-record';
export type { OpenApiDocument, OpenApiOptions, DocsOptions } from './openapi';
export { logger, type LoggerOptions } from './logger';
export { cors, type CorsOptions } from './cors';
export { Versioned, type Version, type VersionedValue } from './versioned';
export { BodyStream } from './body-stream';
export { Dir } from './files/dir';
export { FileBody, type FileBodyInit } from './files/file-body';
export type { SendFileOptions } from './files/send-file';
export type { CompressOptions } from './compress';
export { Json, jsonEnum, Union, type JsonOptions, type JsonEnumOptions, type RenameAll, type UnionType, type UnitVariant } from '../json';
export { Bound } from './bound';
