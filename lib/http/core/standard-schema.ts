import { Failure } from './errors';
/**
 * The Standard Schema v1 interface (standardschema.dev), as fw reads it: any library's schema (zod 4,
 * valibot, arktype) validates a body through `~standard.validate`, and documents itself through
 * `~standard.jsonSchema` (Standard JSON Schema) where the library offers it.
 */
export interface StandardSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly jsonSchema?: {
      input(options: { target: string }): Record<string, unknown>;
      output?(options: { target: string }): Record<string, unknown>;
    };
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardIssue[] };

export interface StandardIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The value a Standard Schema gives: `@Body(NewOrder) o: Infer<typeof NewOrder>`. */
export type Infer<S> = S extends StandardSchema<unknown, infer O> ? O : never;

/**
 * What a Standard Schema takes: a handler under `@Returns(schema)` returns this, and the schema's
 * output is what goes on the wire (a `z.date().transform(…)` field is returned as a Date).
 */
export type InferInput<S> = S extends StandardSchema<infer I, unknown> ? I : never;

export function isStandardSchema(x: unknown): x is StandardSchema {
  const s = (x as { '~standard'?: { version?: unknown; validate?: unknown } } | null)?.[
    '~standard'
  ];
  return (
    (typeof x === 'object' || typeof x === 'function') &&
    x !== null &&
    s?.version === 1 &&
    typeof s.validate === 'function'
  );
}

/** `body.items[2].qty: message`: the first issue, its path spelled as fw spells a class's. */
export function firstIssue(root: string, issues: readonly StandardIssue[]): string {
  const issue = issues[0];
  if (issue === undefined) return `${root}: refused`;
  let at = root;
  for (const p of issue.path ?? []) {
    const key = typeof p === 'object' && p !== null && 'key' in p ? p.key : p;
    at += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  return `${at}: ${issue.message}`;
}

/** A Standard Schema's value, or 400 naming the first failing path (`query.qty: …`, `body.lines[1]: …`). */
export function schemaValue(root: 'body' | 'query', r: StandardResult<unknown>): unknown {
  if (r.issues !== undefined) throw new Failure(400, firstIssue(root, r.issues));
  return r.value;
}

/**
 * The schema a JSON Schema's root stands for: zod writes a schema with `.meta({ id })` as
 * `{ $ref: '#/$defs/<id>', $defs }`; this is that def (with the `$defs` beside it, for the
 * references it holds), or `json` itself.
 */
export function rootSchema(json: Record<string, unknown>): Record<string, unknown> {
  const ref = json.$ref;
  const defs = json.$defs as Record<string, Record<string, unknown>> | undefined;
  if (typeof ref !== 'string' || !ref.startsWith('#/$defs/') || defs === undefined) return json;
  const def = defs[ref.slice('#/$defs/'.length)];
  return def === undefined ? json : { ...def, $defs: defs };
}

/**
 * The JSON Schema of a Standard Schema whose library offers no `~standard.jsonSchema` (valibot 1:
 * `toJsonSchema` of `@valibot/to-json-schema`), draft 2020-12; null or undefined when it has none.
 */
export type JsonSchemaOf = (
  schema: StandardSchema,
  side: SchemaSide,
) => Record<string, unknown> | null | undefined;

/** Which side of the wire a schema describes: what it takes (a body, a query) or what it gives (an answer). */
export type SchemaSide = 'input' | 'output';

/**
 * A Standard Schema's JSON Schema from the library's own conversion (Standard JSON Schema,
 * `~standard.jsonSchema`, draft 2020-12, the OpenAPI 3.1 dialect): `input` for what it takes,
 * `output` for what it gives (zod's output form says `additionalProperties: false`, as the answer
 * is stripped). Null when the library offers none and `jsonSchemaOf` gives none (valibot 1 without
 * `@valibot/to-json-schema`)
 * or the schema cannot be said in JSON Schema (a zod transform).
 */
export function standardJsonSchema(
  schema: StandardSchema,
  side: SchemaSide,
  jsonSchemaOf: JsonSchemaOf | null = null,
): Record<string, unknown> | null {
  const convert = schema['~standard'].jsonSchema;
  const fn = side === 'output' ? (convert?.output ?? convert?.input) : convert?.input;
  try {
    const json =
      fn !== undefined
        ? fn.call(convert, { target: 'draft-2020-12' })
        : jsonSchemaOf === null
          ? null
          : jsonSchemaOf(schema, side);
    return typeof json === 'object' && json !== null ? { ...json } : null;
  } catch {
    return null;
  }
}
