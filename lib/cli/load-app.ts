import { isAbsolute, resolve } from 'node:path';

/** What the command line needs of an app: fw's `App`, or any copy of it another install loaded. */
export interface DescribedApp {
  document(): unknown;
  readonly routes: readonly {
    readonly method: string;
    readonly path: string;
    readonly label: string;
    readonly builtIn: boolean;
    /** The capabilities' marks, read by their keys' names (the app may be another copy of fw). */
    readonly marks?: {
      keys(): Iterable<{ readonly name: string }>;
      get(key: never): unknown;
    };
  }[];
}

/**
 * Loads the app an entry module exports: its `default` export, else its `app` export, else the module
 * itself; a function among those is called (and awaited) to make the app. The entry must not call
 * `listen()`: the command line builds the app without a socket.
 */
export async function loadApp(entry: string, cwd = process.cwd()): Promise<DescribedApp> {
  const file = isAbsolute(entry) ? entry : resolve(cwd, entry);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the entry is a CommonJS or require(esm)-able module named at run time
  const loaded: Record<string, unknown> = require(file);
  const exported = loaded.default ?? loaded.app ?? loaded;
  const app: unknown =
    typeof exported === 'function' ? await (exported as () => unknown)() : exported;
  if (!isApp(app))
    throw new Error(
      `${entry}: exports no fw app: export the app (or a function making it) as default or as \`app\``,
    );
  return app;
}

// Duck-typed rather than `instanceof App`: the entry may load its own copy of fw-http.
function isApp(value: unknown): value is DescribedApp {
  const v = value as Partial<DescribedApp> | null;
  return typeof v === 'object' && v !== null && typeof v.document === 'function' && 'routes' in v;
}
