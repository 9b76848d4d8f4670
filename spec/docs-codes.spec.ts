import { readdirSync, readFileSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import { HTTP_ERRORS } from 'fw-http';
import { CACHE_ERRORS } from 'fw-http/cache';
import { FETCH_ERRORS } from 'fw-http/fetch';

// The docs name error codes as users meet them ("503 `StoreUnavailable`", "code `TooManyParams`",
// "`TooLarge` (500)"). Each one named must be a code fw can raise: one of the modules' tables, or
// a status phrase in PascalCase (the code of a `fail.*` failure without a code of its own).

const ROOT = join(__dirname, '..');

function docFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? docFiles(join(dir, e.name))
      : e.name.endsWith('.md')
        ? [join(dir, e.name)]
        : [],
  );
}

const CODE = '`([A-Z][A-Za-z0-9]+)`';
/** Where prose names a code: after a status, after the word "code", or before a status in parentheses. */
const MENTIONS = [
  new RegExp(`\\b[1-5]\\d\\d(?:\\*\\*)? ${CODE}`, 'g'),
  new RegExp(`\\bcodes? ${CODE}`, 'g'),
  new RegExp(`${CODE} \\((?:\\*\\*)?[1-5]\\d\\d\\b`, 'g'),
  /code === '([A-Za-z0-9]+)'/g,
  new RegExp(`^\\| ${CODE} \\|`, 'gm'),
];

/** A paragraph listing a module's codes: "**fw/cache** (`CacheError`): `TooLarge` (500), `Full` …". */
const LIST = /^\*\*fw[^*]*\*\* \(`\w+Error`\):([^]*?)(?:\n\n|(?![^]))/gm;
/** A code in such a list is followed by a comma, its status in parentheses, or the list's end. */
const LISTED = new RegExp(`${CODE}(?=,| \\(|\\.|$)`, 'gm');

/** Each code mentioned, with the first file that mentions it. */
export function mentionedCodes(texts: readonly (readonly [string, string])[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const [file, text] of texts)
    for (const re of MENTIONS)
      for (const m of text.matchAll(re)) if (!found.has(m[1]!)) found.set(m[1]!, file);
  for (const [file, text] of texts)
    for (const list of text.matchAll(LIST))
      for (const m of list[1]!.matchAll(LISTED)) if (!found.has(m[1]!)) found.set(m[1]!, file);
  return found;
}

const phraseCodes = Object.entries(STATUS_CODES).map(([status, phrase]) =>
  (phrase ?? `Status${status}`)
    .replace(/[^A-Za-z0-9 ]/g, '')
    .replace(/(?:^| )(\w)/g, (_, ch: string) => ch.toUpperCase()),
);

const KNOWN = new Set([
  ...Object.keys(HTTP_ERRORS),
  ...Object.keys(CACHE_ERRORS),
  ...Object.keys(FETCH_ERRORS),
  ...phraseCodes,
  'Status599',
]);

describe('error codes in the docs', () => {
  const texts = [...docFiles(join(ROOT, 'docs')), join(ROOT, 'README.md')].map(
    (f) => [f.slice(ROOT.length + 1), readFileSync(f, 'utf8')] as const,
  );

  it('every error code the docs name is one fw raises', () => {
    const unknown = [...mentionedCodes(texts)]
      .filter(([code]) => !KNOWN.has(code))
      .map(([code, file]) => `${code} (${file})`);
    expect(unknown).toEqual([]);
  });

  it('finds codes where prose names them, and flags one that does not exist', () => {
    const found = mentionedCodes([
      ['a.md', 'answers 503 `StoreUnavailable`, code `Nope`, and `TooLarge` (500)'],
      ['b.md', '| `Gone` | 503 |\n\n**fw/x** (`XError`): `Listed`, `Other`.\n\nNot `Prose`.'],
    ]);
    expect([...found.keys()]).toEqual([
      'StoreUnavailable',
      'Nope',
      'TooLarge',
      'Gone',
      'Listed',
      'Other',
    ]);
    expect(KNOWN.has('Nope')).toBe(false);
    expect(KNOWN.has('NotFound')).toBe(true);
  });

  it('the docs name most of the codes fw raises', () => {
    expect(mentionedCodes(texts).size).toBeGreaterThan(40);
  });
});
