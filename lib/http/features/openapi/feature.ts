// The OpenAPI feature's internal door, loaded on first use by ../openapi-feature.ts: the OpenAPI 3.2
// document built from route records, the route serving it and the docs page. Its public types are
// in the fw-http/openapi door (./index.ts).
export {
  buildDocument,
  DEFAULT_FAILURE_SCHEMA,
  type DocumentInput,
  type OpenApiDocument,
} from './build-document';
export {
  OperationBuilder,
  type HeaderObject,
  type ParameterObject,
  type ResponseObject,
  type SecurityScheme,
} from './operation-builder';
export {
  addOpenApi,
  documentOf,
  hideFromDocument,
  openApiRoutes,
  type OpenApiOptions,
} from './serve';
export { addDocsRoutes, docsRoutes, type DocsOptions } from './docs-page';
