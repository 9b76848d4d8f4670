import { shop } from './shop/shop';

/**
 * The shop for the `fw-http` command line (`fw-http check dist/sample/app.js --against
 * openapi/openapi.json`): built, never listening, writing no document and no log.
 */
export default () => shop({ log: () => undefined, openapiOut: null });
