import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { shop } from '../../../sample/shop/shop';

const COMMITTED = resolve(__dirname, '../../../openapi/openapi.json');

describe('the committed openapi/openapi.json', () => {
  it('OAS-04 is what the current code generates for the sample', () => {
    // openapiOut: null, so this test never writes the file it checks.
    const generated =
      JSON.stringify(shop({ log: () => {}, openapiOut: null }).document(), null, 2) + '\n';
    let committed: string;
    try {
      committed = readFileSync(COMMITTED, 'utf8');
    } catch {
      throw new Error('openapi/openapi.json is missing: run npm run openapi');
    }
    if (committed !== generated)
      throw new Error('openapi/openapi.json is stale: run npm run openapi');
  });
});
