/**
 * Path router for `{name}` templates. Static paths are one map lookup; templated paths walk a
 * segment tree. A path is matched on its raw (still percent-encoded) form, so `%2F` inside a
 * segment stays data and never splits it. Sealed once built: routes cannot be added afterwards.
 */
export interface Match<R> {
  /** Routes by method at the matched path. */
  readonly methods: ReadonlyMap<string, R>;
  /** Raw values of the `{name}` segments, in path order. */
  readonly values: readonly string[];
}

interface Node<R> {
  readonly fixed: Map<string, Node<R>>;
  param: Node<R> | null;
  methods: Map<string, R> | null;
}

const node = <R>(): Node<R> => ({ fixed: new Map(), param: null, methods: null });
/** The values of a match without `{name}` segments: one shared, frozen list. */
export const NO_VALUES: readonly string[] = Object.freeze([]);

export class Router<R> {
  /** Fixed paths, each with its match built once (the request path allocates nothing for them). */
  readonly #exact = new Map<string, Match<R> & { readonly methods: Map<string, R> }>();
  readonly #root: Node<R> = node();
  #sealed = false;

  /** Adds a route; returns false when the method and path are already taken. */
  add(method: string, template: string, route: R): boolean {
    if (this.#sealed) throw new Error('the router is sealed once the app is built');
    const segments = splitTemplate(template);
    let methods: Map<string, R>;
    if (!segments.some((s) => s === null)) {
      const known = this.#exact.get(template);
      methods = known?.methods ?? new Map();
      if (known === undefined)
        this.#exact.set(template, Object.freeze({ methods, values: NO_VALUES }));
    } else {
      let at = this.#root;
      for (const s of segments) {
        if (s === null) at = at.param ??= node();
        else {
          let next = at.fixed.get(s);
          if (!next) at.fixed.set(s, (next = node()));
          at = next;
        }
      }
      methods = at.methods ??= new Map();
    }
    if (methods.has(method)) return false;
    methods.set(method, route);
    return true;
  }

  seal(): void {
    this.#sealed = true;
  }

  find(path: string): Match<R> | null {
    const exact = this.#exact.get(path);
    if (exact !== undefined) return exact;
    const values: string[] = [];
    const at = walk(this.#root, path, 1, values);
    return at ? { methods: at, values } : null;
  }
}

function walk<R>(at: Node<R>, path: string, from: number, values: string[]): Map<string, R> | null {
  if (from > path.length) return at.methods;
  let end = path.indexOf('/', from);
  if (end === -1) end = path.length;
  const segment = path.slice(from, end);
  const fixed = at.fixed.get(segment);
  if (fixed) {
    const found = walk(fixed, path, end + 1, values);
    if (found) return found;
  }
  if (at.param && segment !== '') {
    values.push(segment);
    const found = walk(at.param, path, end + 1, values);
    if (found) return found;
    values.pop();
  }
  return null;
}

/** `'/orders/{id}/cancel'` → `['orders', null, 'cancel']` (null marks a parameter). */
function splitTemplate(template: string): (string | null)[] {
  return template
    .slice(1)
    .split('/')
    .map((s) => (/^\{[^}]*\}$/.test(s) ? null : s));
}

/** The `{name}`s of a template, in order. */
export function templateNames(template: string): string[] {
  return [...template.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]!);
}
