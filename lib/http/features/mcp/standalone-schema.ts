import type { JsonSchema } from '../../schema';

/** The document's `components.schemas`. */
export type Schemas = Readonly<Record<string, JsonSchema>>;

const COMPONENT = '#/components/schemas/';

/**
 * `schema` as a JSON Schema that stands alone (an MCP tool's `inputSchema` and `outputSchema` have
 * no OpenAPI document around them): every `#/components/schemas/X` it reaches becomes `#/$defs/X`,
 * with the components it needs copied under `$defs`. A copy: the document is not touched.
 */
export function standalone(schema: JsonSchema, schemas: Schemas): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  const rewrite = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(rewrite);
    if (typeof x !== 'object' || x === null) return x;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(x)) {
      let value = v;
      if (k === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT)) {
        const name = v.slice(COMPONENT.length);
        if (!Object.hasOwn(defs, name)) {
          defs[name] = {}; // taken before it is copied: a schema that refers to itself ends
          defs[name] = rewrite(schemas[name] ?? {}) as JsonSchema;
        }
        value = `#/$defs/${name}`;
      } else value = rewrite(v);
      Object.defineProperty(out, k, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  const top = rewrite(schema) as JsonSchema;
  return Object.keys(defs).length === 0 ? top : { ...top, $defs: defs };
}
