import { relative, resolve } from 'node:path';
import { shop } from './shop/shop';

/**
 * `npm run openapi`: builds the shop without listening, which writes its OpenAPI document to
 * OPENAPI_OUT (default openapi/openapi.json, relative to the working directory).
 */
const out = resolve(process.cwd(), process.env.OPENAPI_OUT ?? 'openapi/openapi.json');
shop({ openapiOut: out, log: () => undefined }).build();
console.log(`wrote ${relative(process.cwd(), out) || out}`);
