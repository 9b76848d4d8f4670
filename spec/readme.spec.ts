import { readFileSync } from 'node:fs';
import { HTTP_ERRORS } from 'fw';
import { CACHE_ERRORS } from 'fw/cache';
import { FETCH_ERRORS } from 'fw/fetch';

const readme = readFileSync(`${__dirname}/../README.md`, 'utf8');

describe('the README', () => {
  it.each([
    ['fw', Object.keys(HTTP_ERRORS)],
    ['fw/cache', Object.keys(CACHE_ERRORS)],
    ['fw/fetch', Object.keys(FETCH_ERRORS)],
  ])('lists every error code of %s', (_module, codes) => {
    for (const code of codes) expect(readme).toContain(`\`${code}\``);
  });

  it('starts with the two commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm install && npm test');
  });
});
