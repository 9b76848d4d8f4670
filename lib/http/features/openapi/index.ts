/**
 * `fw-http/openapi`: what a program writes about its API besides routes. `@ApiVersion` serves a
 * route under one version of the API and `@Deprecated` marks it (headers and the document); the
 * option types of `app.openapi`, `app.docs` and `app.versions`, and the document's own type. The
 * document builder itself loads with the first app that describes itself (./feature.ts).
 */
export { ApiVersion, Deprecated } from '../api-versions';
export type { VersionsOptions, DeprecatedOptions } from '../api-versions';
export type { OpenApiDocument } from './build-document';
export type { OpenApiOptions } from './serve';
export type { DocsOptions } from './docs-page';
