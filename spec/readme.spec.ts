import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { HTTP_ERRORS } from 'fw-http';
import { CACHE_ERRORS } from 'fw-http/cache';
import { FETCH_ERRORS } from 'fw-http/fetch';

const root = resolve(__dirname, '..');
const read = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The pages a reader follows links through: the README, CONTRIBUTING.md and every page of docs/. */
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Markdown without its fenced code blocks (a `# comment` in a shell block is not a heading). */
const withoutFences = (text: string): string =>
  text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of withoutFences(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const words = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = words
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Every inline link `[text](target)` outside code, with its target as written. */
function linksOf(text: string): string[] {
  const prose = withoutFences(text).replace(/`[^`\n]*`/g, 'code');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
}

describe('the README and the docs', () => {
  it.each([
    ['fw-http', Object.keys(HTTP_ERRORS)],
    ['fw-http/cache', Object.keys(CACHE_ERRORS)],
    ['fw-http/fetch', Object.keys(FETCH_ERRORS)],
  ])('docs/reference.md lists every error code of %s', (_module, codes) => {
    const reference = read('docs/reference.md');
    expect(codes.length).toBeGreaterThan(0);
    const missing = codes.filter((code) => !reference.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it('the README starts with the two commands', () => {
    const readme = read('README.md');
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm install && npm test');
  });

  it("the README's contents link to every page of docs/ and to CONTRIBUTING.md", () => {
    const links = new Set(linksOf(read('README.md')).map((l) => l.split('#')[0]));
    for (const page of pages.filter((p) => p !== 'README.md'))
      expect({ page, linked: links.has(page) }).toEqual({ page, linked: true });
  });

  it.each(pages)(
    'every relative link in %s leads to a file that exists, and to a heading that exists',
    (page) => {
      const links = linksOf(read(page)).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));
      expect(links.length).toBeGreaterThan(0);
      const dead: string[] = [];
      for (const link of links) {
        const hash = link.indexOf('#');
        const path = hash === -1 ? link : link.slice(0, hash);
        const anchor = hash === -1 ? null : decodeURIComponent(link.slice(hash + 1));
        const target =
          path === ''
            ? join(root, page)
            : resolve(dirname(join(root, page)), decodeURIComponent(path));
        if (!target.startsWith(root + '/') || !existsSync(target)) {
          dead.push(`${link}: no file ${relative(root, target)}`);
          continue;
        }
        if (anchor === null) continue;
        if (!target.endsWith('.md') || statSync(target).isDirectory()) {
          dead.push(`${link}: an anchor into a file that is not markdown`);
          continue;
        }
        if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor))
          dead.push(`${link}: no heading #${anchor} in ${relative(root, target)}`);
      }
      expect(dead).toEqual([]);
    },
  );

  it('works out anchors as GitHub does', () => {
    const anchors = anchorsOf(
      '# fw\n## Idempotent replay and fw/cache\n## Outbound calls: fw/fetch\n### `Upgrade` on other routes\n## Notes\n## Notes\n```sh\n# not a heading\n```\n',
    );
    expect([...anchors]).toEqual([
      'fw',
      'idempotent-replay-and-fwcache',
      'outbound-calls-fwfetch',
      'upgrade-on-other-routes',
      'notes',
      'notes-1',
    ]);
  });
});
