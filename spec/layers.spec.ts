import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The import graph of lib/, type-only imports included (a reader follows those too): no cycle
// anywhere, lib/http's layer folders import only their own layer or lower ones, and lib/cache,
// lib/fetch and lib/json never import lib/http. (docs/design.md draws the layers.)

const LIB = path.join(__dirname, '..', 'lib');

/** lib/http's layers, bottom to top; a file may import its own layer or a lower one. */
const HTTP_LAYERS = ['core', 'schema', 'request', 'route', 'pipeline', 'features', 'app'] as const;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : name.endsWith('.ts') ? [full] : [];
  });
}

/** Every relative import of a file (`import`, `import type`, `export … from`, `import()`), resolved to a file. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => {
      const target = path.resolve(path.dirname(file), spec);
      if (existsSync(`${target}.ts`)) return `${target}.ts`;
      if (existsSync(path.join(target, 'index.ts'))) return path.join(target, 'index.ts');
      throw new Error(`${path.relative(LIB, file)}: cannot resolve ${spec}`);
    });
}

const rel = (f: string) => path.relative(LIB, f);
const files = filesUnder(LIB);
const graph = new Map(files.map((f) => [rel(f), importsOf(f).map(rel)]));

/** The layer rank of a lib/http file: its folder's place in HTTP_LAYERS; the public door is above them all. */
function rank(file: string): number {
  const [top, layer] = file.split(path.sep);
  if (top !== 'http') return -1;
  if (layer === 'index.ts') return HTTP_LAYERS.length;
  const at = HTTP_LAYERS.indexOf(layer as (typeof HTTP_LAYERS)[number]);
  if (at === -1) throw new Error(`${file} is in no layer folder of lib/http`);
  return at;
}

/** The cycles of the graph: strongly connected components of more than one file, or a file importing itself. */
function cycles(): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the layers of lib (docs/design.md)', () => {
  it('reads the whole of lib, every lib/http file in a layer folder', () => {
    expect(graph.size).toBeGreaterThan(100);
    for (const file of graph.keys()) rank(file);
  });

  it('has no import cycle, type-only imports included', () => {
    expect(cycles()).toEqual([]);
  });

  it('lib/http imports point down or sideways: a layer never imports a higher one', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      if (!file.startsWith(`http${path.sep}`)) continue;
      for (const target of imports) {
        if (target.startsWith(`http${path.sep}`) && rank(target) > rank(file))
          upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('lib/cache, lib/fetch and lib/json never import lib/http', () => {
    const wrong = [...graph].flatMap(([file, imports]) =>
      file.startsWith(`http${path.sep}`)
        ? []
        : imports.filter((t) => t.startsWith(`http${path.sep}`)).map((t) => `${file} -> ${t}`),
    );
    expect(wrong).toEqual([]);
  });

  /** Every file `from` reaches through its imports (type-only ones included), `from` left out. */
  const reached = (from: string): Set<string> => {
    const seen = new Set<string>();
    const walk = (f: string): void => {
      for (const t of graph.get(f) ?? [])
        if (!seen.has(t)) {
          seen.add(t);
          walk(t);
        }
    };
    walk(from);
    return seen;
  };
  const FEATURES = `http${path.sep}features${path.sep}`;
  const APP = path.join('http', 'app', 'app.ts');
  const DEFAULTS = path.join('http', 'app', 'defaults.ts');

  it('App (lib/http/app/app.ts) imports no feature, directly or through another file', () => {
    expect(graph.has(APP)).toBe(true);
    expect([...reached(APP)].filter((f) => f.startsWith(FEATURES))).toEqual([]);
  });

  it("in lib/http/app only defaults.ts (fw's own capabilities, wired in) names a feature", () => {
    const naming = [...graph]
      .filter(
        ([file, imports]) =>
          file.startsWith(`http${path.sep}app${path.sep}`) &&
          imports.some((t) => t.startsWith(FEATURES)),
      )
      .map(([file]) => file);
    expect(naming).toEqual([DEFAULTS]);
  });

  it('the check sees a feature app.ts would reach through another file (the check itself)', () => {
    const own = graph.get(APP)!;
    graph.set('http/app/__probe.ts', [path.join('http', 'features', 'health.ts')]);
    graph.set(APP, [...own, 'http/app/__probe.ts']);
    try {
      expect([...reached(APP)].filter((f) => f.startsWith(FEATURES))).toEqual([
        path.join('http', 'features', 'health.ts'),
      ]);
    } finally {
      graph.set(APP, own);
      graph.delete('http/app/__probe.ts');
    }
  });

  it('finds a cycle and an upward import when there is one (the check itself)', () => {
    graph.set('http/core/__probe.ts', ['http/app/__probe.ts']);
    graph.set('http/app/__probe.ts', ['http/core/__probe.ts']);
    try {
      expect(cycles()).toContainEqual(['http/app/__probe.ts', 'http/core/__probe.ts']);
      expect(rank('http/core/__probe.ts')).toBeLessThan(rank('http/app/__probe.ts'));
    } finally {
      graph.delete('http/core/__probe.ts');
      graph.delete('http/app/__probe.ts');
    }
  });
});
