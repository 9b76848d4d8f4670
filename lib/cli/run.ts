import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { documentDiff } from './document-diff';
import { loadApp } from './load-app';
import { routeTable } from './route-table';

/** Where the command line writes: stdout and stderr, or a test's buffers. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

const USAGE = `usage: fw-http <command> <entry> [options]

  openapi <entry> [-o file]        write the app's OpenAPI document (to stdout without -o)
  check <entry> --against file     exit 1, printing the differences, when file is not the app's document
  routes <entry>                   print the route table (IDEMPOTENT: yes, atomic or no)

<entry> is a built JavaScript module exporting the app, or a function making it, as its default
export or as \`app\`; it must not call listen().`;

/** Most differences `check` prints before it says how many more there are. */
const MOST_LINES = 50;

/**
 * Runs one command and answers its exit code: 0 done, 1 the document drifted, 2 a usage error
 * or an entry that could not be loaded or built (its Refusals are printed).
 */
export async function run(argv: readonly string[], io: Output = stdio): Promise<number> {
  const [command, entry, ...rest] = argv;
  if (command === '--help' || command === '-h') return say(io.out, USAGE, 0);
  const flags = parseFlags(rest);
  // Own names only: `in` would also find `toString`, `constructor` … on the object's prototype.
  if (!command || !entry || !Object.hasOwn(COMMANDS, command) || flags === null)
    return say(io.err, USAGE, 2);
  try {
    return await COMMANDS[command as keyof typeof COMMANDS](entry, flags, io);
  } catch (e) {
    io.err(`fw-http ${command}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}

type Flags = Readonly<Record<string, string>>;

const COMMANDS = {
  async openapi(entry: string, flags: Flags, io: Output): Promise<number> {
    const text = documentText(await loadApp(entry));
    if (flags.o === undefined) return say(io.out, text.trimEnd(), 0);
    const file = resolve(flags.o);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    io.out(`wrote ${flags.o}\n`);
    return 0;
  },
  async check(entry: string, flags: Flags, io: Output): Promise<number> {
    if (flags.against === undefined) return say(io.err, USAGE, 2);
    const committed: unknown = JSON.parse(readFileSync(resolve(flags.against), 'utf8'));
    const lines = documentDiff(committed, JSON.parse(documentText(await loadApp(entry))));
    if (!lines.length) return say(io.out, `${flags.against} is the app's document`, 0);
    const shown = lines.slice(0, MOST_LINES);
    const more = lines.length > MOST_LINES ? [`… and ${lines.length - MOST_LINES} more`] : [];
    io.err(
      [
        `${flags.against} is not the app's document (- only in the file, + only in the app, ~ changed):`,
        ...shown.map((l) => `  ${l}`),
        ...more,
        `rewrite it with: fw-http openapi ${entry} -o ${flags.against}`,
      ].join('\n') + '\n',
    );
    return 1;
  },
  async routes(entry: string, _flags: Flags, io: Output): Promise<number> {
    io.out(`${routeTable(await loadApp(entry))}\n`);
    return 0;
  },
};

/** Writes a line and answers the exit code. */
function say(to: (text: string) => void, text: string, code: number): number {
  to(`${text}\n`);
  return code;
}

const FLAG_NAMES: Readonly<Record<string, string>> = {
  '-o': 'o',
  '--out': 'o',
  '--against': 'against',
};

/** `-o file` and `--against file`; anything else is a usage error (null). */
function parseFlags(args: readonly string[]): Flags | null {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const word = args[i]!;
    const name = Object.hasOwn(FLAG_NAMES, word) ? FLAG_NAMES[word] : undefined;
    const value = args[i + 1];
    if (name === undefined || value === undefined) return null;
    flags[name] = value;
  }
  return flags;
}

/** Exactly as `app.openapi({ path })` writes the file, so a written document checks clean. */
const documentText = (app: { document(): unknown }) =>
  JSON.stringify(app.document(), null, 2) + '\n';

const stdio: Output = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};
