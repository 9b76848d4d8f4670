import {
  standardJsonSchema,
  type SchemaSide,
  type StandardSchema,
} from '../../core/standard-schema';
import type { OperationBuilder } from './operation-builder';

type Json = Record<string, unknown>;

// Which Standard Schema got which component name, per document (its components map) and side.
const named = new WeakMap<
  Map<string, object>,
  Map<StandardSchema, Partial<Record<SchemaSide, string>>>
>();

const DEFS = '#/$defs/';

/**
 * A Standard Schema as a named component, with its `$ref`. Its name: the schema's
 * own (zod's `.meta({ id })`, which zod writes as a `$defs` entry, or a `title`), else `fallback`
 * (`OrdersController.create.Body`, `OrdersController.create.201`). The library's `$defs` become
 * components of their own and its `#/$defs/X` references point at them, as a reference inside a
 * component is read against the whole document. A name taken by another schema gets `Input` (for
 * the input side of a schema also answered) or a number. A schema without a JSON Schema is
 * described as any object.
 */
export function schemaComponent(
  schema: StandardSchema,
  side: SchemaSide,
  fallback: string,
  op: Pick<OperationBuilder, 'schemas' | 'jsonSchemaOf'>,
): { $ref: string } {
  const schemas = op.schemas;
  let owned = named.get(schemas);
  if (owned === undefined) named.set(schemas, (owned = new Map()));
  const mine = owned.get(schema) ?? {};
  owned.set(schema, mine);
  const known = mine[side];
  if (known !== undefined) return ref(known);
  const json = standardJsonSchema(schema, side, op.jsonSchemaOf) ?? { type: 'object' };
  delete json.$schema;
  const root = hoistDefs(json, side, schemas);
  let name: string;
  const only = Object.keys(root);
  if (only.length === 1 && typeof root.$ref === 'string')
    name = root.$ref.slice(root.$ref.lastIndexOf('/') + 1);
  else {
    const said =
      typeof root.title === 'string'
        ? root.title
        : typeof root.$id === 'string'
          ? root.$id
          : fallback;
    delete root.$id;
    name = place(said, root, side, schemas);
  }
  mine[side] = name;
  return ref(name);
}

/**
 * `json` without its `$defs`: each is set as a component of its own, and every `#/$defs/X`
 * reference (in `json` and in the defs) points at X's component.
 */
export function hoistDefs(json: Json, side: SchemaSide, schemas: Map<string, object>): Json {
  const defs = (json.$defs ?? {}) as Record<string, Json>;
  const rest = { ...json };
  delete rest.$defs;
  // A def is compared with what is there as if it kept its name; then every reference follows its final name.
  const asIs = new Map(Object.keys(defs).map((n) => [n, n]));
  const renamed = new Map<string, string>();
  for (const [n, def] of Object.entries(defs))
    renamed.set(n, place(n, rewrite(def, asIs) as Json, side, schemas));
  for (const [n, def] of Object.entries(defs))
    schemas.set(renamed.get(n)!, rewrite(def, renamed) as object);
  return rewrite(rest, renamed) as Json;
}

const ref = (name: string): { $ref: string } => ({ $ref: `#/components/schemas/${name}` });

/** Sets `json` as a component: under `wanted` when free or holding the same schema, else `…Input` or a number. */
function place(wanted: string, json: Json, side: SchemaSide, schemas: Map<string, object>): string {
  const base = wanted.replace(/[^A-Za-z0-9._-]/g, '_') || 'Anonymous';
  const text = JSON.stringify(json);
  const tries = side === 'input' ? [base, `${base}Input`] : [base];
  for (let i = 2; tries.length < 100; i++) tries.push(`${base}_${i}`);
  for (const name of tries) {
    const there = schemas.get(name);
    if (there !== undefined && JSON.stringify(there) !== text) continue;
    schemas.set(name, json);
    return name;
  }
  throw new TypeError(`too many different schemas are named ${base}`);
}

/** `json` with each `#/$defs/X` reference pointing at X's component. */
function rewrite(json: unknown, renamed: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(json)) return json.map((x) => rewrite(x, renamed));
  if (typeof json !== 'object' || json === null) return json;
  const out: Json = {};
  for (const [k, v] of Object.entries(json as Json)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith(DEFS)) {
      const to = renamed.get(v.slice(DEFS.length));
      out[k] = to === undefined ? v : `#/components/schemas/${to}`;
    } else out[k] = rewrite(v, renamed);
  }
  return out;
}
