/** One fenced ```ts block of a Markdown page, where it stands and what the page says it needs. */
export interface CodeBlock {
  /** The page, relative to the repository root (`docs/guide/app.md`). */
  readonly file: string;
  /** 1-based line of the block's first code line in the page. */
  readonly line: number;
  /** The code, with the fence's indentation removed. */
  readonly code: string;
  /** `ts fragment`: a piece of a larger program, only checked for syntax. */
  readonly fragment: boolean;
  /** `ts members`: members of a controller class (decorated methods), checked inside one. */
  readonly members: boolean;
  /** Names of the preludes under docs/guide/preludes/ the block assumes (`<!-- prelude: a, b -->`). */
  readonly preludes: readonly string[];
}

const FENCE = /^([ \t]*)(`{3,}|~{3,})[ \t]*([^\n]*)$/;
const PRELUDE = /^[ \t]*<!--[ \t]*prelude:[ \t]*([\w\s,-]+?)[ \t]*-->[ \t]*$/;

/** The prelude comment on the last non-blank line before `index`, if there is one. */
function preludesBefore(lines: readonly string[], index: number): string[] {
  let i = index - 1;
  while (i >= 0 && lines[i]!.trim() === '') i--;
  const m = i >= 0 ? PRELUDE.exec(lines[i]!) : null;
  return m === null ? [] : m[1]!.split(/[\s,]+/).filter((n) => n !== '');
}

/**
 * Every ```ts (or ```typescript) block of a Markdown page. The info string's first word is the
 * language; a second word `members` marks members of a controller class, `fragment` a block that is
 * only checked for syntax.
 *
 * @example tsBlocksOf('docs/guide/app.md', readFileSync('docs/guide/app.md', 'utf8'))
 */
export function tsBlocksOf(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (open === null) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    let end = i + 1;
    while (end < lines.length && !closes(lines[end]!, fence)) end++;
    const words = info.trim().split(/\s+/);
    if (words[0] === 'ts' || words[0] === 'typescript') {
      const body = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
      blocks.push({
        file,
        line: i + 2,
        code: body.join('\n'),
        fragment: words.includes('fragment'),
        members: words.includes('members'),
        preludes: preludesBefore(lines, i),
      });
    }
    i = end;
  }
  return blocks;
}

function closes(line: string, fence: string): boolean {
  const t = line.trim();
  return t.startsWith(fence) && /^(`+|~+)$/.test(t) && t[0] === fence[0];
}
