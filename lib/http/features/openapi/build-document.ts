import { JSON_TYPE } from '../../core/media-types';
import type { Capability } from '../../route/extensions';
import type { FailureShape } from '../../core/error-mapping';
import type { RouteRecord } from '../../route/route-record';
import type { JsonSchemaOf } from '../../core/standard-schema';
import { readShape, schemaOf } from '../../schema';
import { describeRoute } from './describe-route';
import { describeHandler } from './handler-extension';
import { Components, OperationBuilder } from './operation-builder';

/** An OpenAPI 3.2 document as plain data (what `app.document()` returns and `/openapi.json` serves). */
export interface OpenApiDocument {
  readonly openapi: '3.2.0';
  readonly info: { readonly title: string; readonly version: string };
  readonly tags: readonly { readonly name: string }[];
  readonly paths: {
    readonly [path: string]: { readonly [method: string]: { readonly [field: string]: unknown } };
  };
  readonly components: {
    readonly schemas: { readonly [name: string]: unknown };
    readonly securitySchemes?: { readonly [name: string]: unknown };
  };
}

export interface DocumentInput {
  readonly records: readonly RouteRecord[];
  /** The class given to `app.failures(T)`, or null for the default `{ error, status }`. */
  readonly failureShape: FailureShape | null;
  readonly info?: { readonly title?: string | undefined; readonly version?: string | undefined };
  /** Each capability's `describe` adds its pieces to every operation, after the core's. */
  readonly capabilities?: readonly Capability[];
  /** The App's `jsonSchemaOf`: the JSON Schema of a Standard Schema whose library has none. */
  readonly jsonSchemaOf?: JsonSchemaOf | null | undefined;
}

/** The default failure body, `{ "error": "…", "status": 404 }`. */
export const DEFAULT_FAILURE_SCHEMA = Object.freeze({
  type: 'object',
  required: ['error', 'status'],
  properties: {
    error: { type: 'string', description: 'What went wrong' },
    status: { type: 'integer', description: 'The HTTP status, repeated' },
  },
});

// OpenAPI's own order of the operations of a path item.
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Builds the OpenAPI 3.2.0 document of a set of route records (3.2 for `itemSchema`, which
 * describes each event of a stream; nothing else in it needs more than 3.1). Paths, methods, schemas and
 * security schemes come out sorted and every object's keys in a fixed order, so the same routes
 * always give the same text.
 */
export function buildDocument(input: DocumentInput): OpenApiDocument {
  const components = new Components();
  components.jsonSchemaOf = input.jsonSchemaOf ?? null;
  // Reserved first: a program class that happens to be named Failure becomes Failure_2.
  components.schemas.set('Failure', DEFAULT_FAILURE_SCHEMA);
  const failureName = describeFailureShape(input.failureShape, components);
  const failure = components.schemas.get(failureName ?? 'Failure') as
    { properties?: Record<string, unknown> } | undefined;
  components.failureHasCode = failure?.properties?.code !== undefined;

  const capabilities = input.capabilities ?? [];
  const paths = new Map<string, Map<string, OperationBuilder>>();
  for (const record of input.records) {
    const op = new OperationBuilder(record, components);
    describeRoute(
      record,
      op,
      capabilities.some((c) => c.answersItself?.(record) === true),
    );
    for (const c of capabilities) c.describe?.(record, op);
    describeHandler(record, op);
    let item = paths.get(record.path);
    if (item === undefined) paths.set(record.path, (item = new Map()));
    item.set(record.method.toLowerCase(), op);
  }

  const tags = [...new Set(input.records.map((r) => r.tag))].sort(byText).map((name) => ({ name }));
  const doc = {
    openapi: '3.2.0' as const,
    info: { title: input.info?.title ?? 'fw app', version: input.info?.version ?? '0.0.0' },
    tags,
    paths: pathsJson(paths),
    components: componentsJson(components),
  };
  // Through JSON once: shared (and frozen) schema objects become separate, plain values.
  const plain = JSON.parse(JSON.stringify(doc)) as typeof doc;
  if (failureName !== null) renameSchema(plain, failureName, 'Failure');
  const failureType = input.failureShape?.contentType;
  if (failureType !== undefined && failureType !== JSON_TYPE)
    retypeFailures(plain.paths, failureType);
  return plain;
}

/** The paths object: paths sorted, each path's methods in the order of METHODS. */
function pathsJson(
  paths: ReadonlyMap<string, ReadonlyMap<string, OperationBuilder>>,
): Record<string, Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const path of [...paths.keys()].sort(byText)) {
    const item = paths.get(path)!;
    const methods = [...item.keys()].sort((a, b) => METHODS.indexOf(a) - METHODS.indexOf(b));
    out[path] = Object.fromEntries(methods.map((m) => [m, item.get(m)!.toJSON()]));
  }
  return out;
}

/** The components object: schemas and security schemes sorted by name (no empty securitySchemes). */
function componentsJson(components: Components): {
  schemas: Record<string, unknown>;
  securitySchemes?: Record<string, unknown>;
} {
  const schemas: Record<string, unknown> = {};
  for (const name of [...components.schemas.keys()].sort(byText))
    schemas[name] = components.schemas.get(name);
  if (components.securitySchemes.size === 0) return { schemas };
  const securitySchemes = Object.fromEntries(
    [...components.securitySchemes].sort((a, b) => byText(a[0], b[0])),
  );
  return { schemas, securitySchemes };
}

/** Failure bodies under the shape's own content type (`application/problem+json`), beside a declared JSON answer of the same status. */
function retypeFailures(
  paths: Record<string, Record<string, Record<string, unknown>>>,
  type: string,
): void {
  const ref = '#/components/schemas/Failure';
  // The failure schema, or it narrowed to declared codes (`allOf: [Failure, { code enum }]`).
  const isFailure = (s: Record<string, unknown>): boolean =>
    s.$ref === ref || (s.allOf as Record<string, unknown>[] | undefined)?.[0]?.$ref === ref;
  for (const item of Object.values(paths))
    for (const op of Object.values(item))
      for (const r of Object.values(
        (op.responses ?? {}) as Record<
          string,
          { content?: Record<string, { schema: Record<string, unknown> }> }
        >,
      )) {
        const json = r.content?.[JSON_TYPE];
        if (json === undefined) continue;
        const oneOf = json.schema.oneOf as Record<string, unknown>[] | undefined;
        let failure: Record<string, unknown> | undefined;
        if (isFailure(json.schema)) {
          failure = json.schema;
          delete r.content![JSON_TYPE];
        } else if (oneOf !== undefined && oneOf.some(isFailure)) {
          failure = oneOf.find(isFailure);
          json.schema = oneOf.find((s) => !isFailure(s))!;
        } else continue;
        r.content![type] = { schema: failure! };
      }
}

/**
 * `app.failures(T)`: T's own schema takes the name `Failure`. It is described under its class name
 * first (so nested and self references resolve as usual) and renamed when the document is done.
 * Returns the name to rename, or null when the default or the fallback is used.
 */
function describeFailureShape(shape: FailureShape | null, components: Components): string | null {
  if (shape === null) return null;
  if (typeof shape !== 'function' || readShape(shape).properties.length === 0) {
    // Without class-validator decorators the fields cannot be known.
    components.schemas.set('Failure', { type: 'object' });
    return null;
  }
  const ref = schemaOf(shape, components.schemas).$ref;
  return ref.slice(ref.lastIndexOf('/') + 1);
}

function renameSchema(
  doc: { components: { schemas: Record<string, unknown> } },
  from: string,
  to: string,
): void {
  const schemas = doc.components.schemas;
  schemas[to] = schemas[from];
  delete schemas[from];
  const sorted = Object.keys(schemas)
    .sort(byText)
    .map((k) => [k, schemas[k]] as const);
  for (const k of Object.keys(schemas)) delete schemas[k];
  for (const [k, v] of sorted) schemas[k] = v;
  const fromRef = `#/components/schemas/${from}`;
  const toRef = `#/components/schemas/${to}`;
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (typeof x === 'object' && x !== null) {
      const o = x as Record<string, unknown>;
      if (o.$ref === fromRef) o.$ref = toRef;
      for (const v of Object.values(o)) walk(v);
    }
  };
  walk(doc);
}
