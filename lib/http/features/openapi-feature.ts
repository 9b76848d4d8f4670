import type * as OpenApi from './openapi/feature';

let loaded: typeof OpenApi | null = null;

/**
 * The OpenAPI feature (the document builder, its route and the docs page: eight modules), loaded
 * by the first app that describes itself or serves tools, not by `require('fw-http')`.
 */
export function openApiFeature(): typeof OpenApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use
  return (loaded ??= require('./openapi/feature') as typeof OpenApi);
}
