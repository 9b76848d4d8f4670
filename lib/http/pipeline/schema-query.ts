import { HttpError } from '../core/errors';
import {
  rootSchema,
  schemaValue,
  standardJsonSchema,
  type JsonSchemaOf,
  type StandardResult,
  type StandardSchema,
} from '../core/standard-schema';
import { type Ctx } from '../request/ctx';
import { isThenable } from '../core/thenable';
import {
  NOT_CONVERTED,
  TOO_MANY,
  convertQueryScalar,
  readParams,
  type Params,
  type ValueKind,
} from '../schema';

/**
 * `@Query(schema)`: the query's values, converted as the schema types them, validated
 * by the schema; 400 naming the first failing path (`query.qty: …`), 400 `TooManyParams` past
 * `maxParams`.
 */
export function schemaQuery(
  schema: StandardSchema,
  maxParams: number,
  jsonSchemaOf: JsonSchemaOf | null,
): (c: Ctx) => unknown {
  const plan = querySchemaPlan(schema, jsonSchemaOf);
  const validate = schema['~standard'].validate.bind(schema['~standard']);
  return (c) => {
    const input = readParams(c.rawQuery, plan.keep, maxParams);
    if (input === TOO_MANY)
      throw new HttpError('TooManyParams', `query: more than ${maxParams} parameters`);
    const r = validate(plan.convert(input));
    return isThenable<StandardResult<unknown>>(r)
      ? Promise.resolve(r).then((done) => schemaValue('query', done))
      : schemaValue('query', r);
  };
}

/** What `@Query(schema)` does with the query's text values before its schema sees them. */
interface QuerySchemaPlan {
  /** The names read (the schema's properties), or null for every name (no JSON Schema to tell). */
  readonly keep: ReadonlySet<string> | null;
  /** The query as the schema is given it: each value converted as its property is typed. */
  convert(params: Params): Record<string, unknown>;
}

type Kind = { readonly kind: ValueKind; readonly items: ValueKind | null };

/**
 * A query's values are text; a schema such as `z.number()` wants a number. So each value is
 * converted as the schema's own JSON Schema (input side) types its property, by the rules a class's
 * query follows (integers `/^-?\d+$/`, finite decimals, `true`/`false`/`1`/`0`), an
 * `array` property takes one value as a list of one, and a repeated name of a scalar stays a list.
 * A value that does not convert is handed over as sent, so the schema refuses it in its own words,
 * naming the path. A library without a JSON Schema (valibot 1, unless `App({ jsonSchemaOf })` gives one) is given
 * every value as text.
 */
function querySchemaPlan(
  schema: StandardSchema,
  jsonSchemaOf: JsonSchemaOf | null,
): QuerySchemaPlan {
  const json = standardJsonSchema(schema, 'input', jsonSchemaOf);
  const properties = json === null ? undefined : rootSchema(json).properties;
  if (typeof properties !== 'object' || properties === null)
    return { keep: null, convert: (params) => ({ ...params }) };
  const kinds = new Map<string, Kind>();
  for (const [name, s] of Object.entries(properties as Record<string, unknown>)) {
    const kind = kindOf(s);
    const items = kind === 'array' ? kindOf((s as { items?: unknown }).items) : null;
    kinds.set(name, { kind, items });
  }
  return {
    keep: new Set(kinds.keys()),
    convert(params) {
      const out: Record<string, unknown> = {};
      for (const name in params) {
        const v = params[name]!;
        const k = kinds.get(name)!;
        if (k.kind === 'array') {
          const list = typeof v === 'string' ? [v] : v;
          out[name] = k.items === null ? list : list.map((x) => scalar(k.items!, x));
        } else out[name] = typeof v === 'string' ? scalar(k.kind, v) : v;
      }
      return out;
    },
  };
}

function scalar(kind: ValueKind, raw: string): unknown {
  const v = convertQueryScalar(kind, raw, null);
  return v === NOT_CONVERTED ? raw : v;
}

/** The kind a JSON Schema gives a value: its `type` (the one not `"null"` of a list), else text. */
function kindOf(s: unknown): ValueKind {
  const type = (s as { type?: unknown } | null)?.type;
  const one = Array.isArray(type) ? type.find((t) => t !== 'null') : type;
  switch (one) {
    case 'integer':
    case 'number':
    case 'boolean':
    case 'array':
      return one;
    default:
      return 'string';
  }
}
