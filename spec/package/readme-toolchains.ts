import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './stage';

/**
 * The two toolchains the README's "Your compiler settings" gives, read from the README itself: its
 * tsconfig.json, and for each toolchain the `npm install -D` line and the jest.config.js. The
 * consumer check sets a project up with exactly these, so the README is what is tested. Each code
 * block is found by the word after its language on the opening fence (```json tsconfig.json).
 */
export interface ReadmeToolchain {
  /** The scratch project's name. */
  readonly name: string;
  /** The TypeScript major the README's install line must give. */
  readonly typescript: number;
  /** The packages of the README's `npm install -D` line, as npm's arguments. */
  readonly devPackages: readonly string[];
  /** The README's jest.config.js. */
  readonly jestConfig: string;
}

const readme = (): string => readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The text of the README's code block tagged `tag` (the word after the fence's language). */
export function readmeBlock(tag: string): string {
  const escaped = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const found = new RegExp(`^\`\`\`\\w+ ${escaped}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(readme());
  if (found === null) throw new Error(`README.md has no code block tagged ${tag}`);
  return found[1]!;
}

/** The packages of an `npm install -D a b c` line. */
function devPackagesOf(block: string): string[] {
  const words = block.trim().split(/\s+/);
  if (words.slice(0, 3).join(' ') !== 'npm install -D' || block.trim().includes('\n'))
    throw new Error(`not one "npm install -D" line: ${block}`);
  return words.slice(3);
}

/** The README's toolchains: tsc 7 with @swc/jest, TypeScript 6 with ts-jest. */
export function readmeToolchains(): ReadmeToolchain[] {
  return [
    { name: 'readme-tsc7-swc-jest', typescript: 7, tag: 'swc-jest' },
    { name: 'readme-ts6-ts-jest', typescript: 6, tag: 'ts-jest' },
  ].map(({ name, typescript, tag }) => ({
    name,
    typescript,
    devPackages: devPackagesOf(readmeBlock(`install:${tag}`)),
    jestConfig: readmeBlock(`jest.config.js:${tag}`),
  }));
}

/**
 * The packages whose install scripts npm 11 names when the README's toolchains are installed
 * (`npm warn install-scripts`), as the README's "Expected warnings" lists them.
 */
export const EXPECTED_INSTALL_SCRIPTS: readonly string[] = ['@swc/core', '@parcel/watcher'];

/** The names of the packages in npm's `install-scripts` warnings. */
export function installScriptsNamed(npmStderr: string): string[] {
  const names = [...npmStderr.matchAll(/^npm warn install-scripts\s+(@?[^@\s]+)@\S+ \(/gm)];
  return [...new Set(names.map((m) => m[1]!))].sort();
}

/** Whether the README's "Expected warnings" names `pkg`. */
export const readmeExpects = (pkg: string): boolean =>
  /\*\*Expected warnings\.\*\*[\s\S]*?\n\n/.exec(readme())?.[0].includes(`\`${pkg}\``) ?? false;
