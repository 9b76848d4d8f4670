import type { Contract } from '../../core/answers';
import { RefusalError } from '../../core/errors';
import { templateNames } from '../../core/router';
import type { Host, RecordCheck } from '../../route/extensions';
import type { RouteRecord } from '../../route/route-record';
import { readShape, type JsonSchema } from '../../schema';
import { GUARD, type GuardEntry } from '../guards';
import { IDEMPOTENT } from '../idempotency/idempotent-mark';
import { openApiFeature } from '../openapi-feature';
import { TOOL } from './tool';
import { standalone, type Schemas } from './standalone-schema';

/** One tool as `tools/list` gives it. */
export interface ToolDefinition {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly annotations: { readonly readOnlyHint?: true; readonly idempotentHint?: true };
  readonly _meta?: { readonly idempotencyKey: 'required' };
}

/** A tool and what a call needs to turn its arguments into the route's request. */
export interface ToolEntry {
  readonly definition: ToolDefinition;
  readonly record: RouteRecord;
  /** Its route is `@Idempotent`: a call carries `_meta.idempotencyKey`. */
  readonly idempotent: boolean;
  readonly pathNames: readonly string[];
  readonly queryNames: readonly string[];
  /** The body's fields, or null when the route reads no body. */
  readonly bodyNames: readonly string[] | null;
  /** What the caller must resolve (and the scopes it must hold) to see the tool. */
  readonly guards: readonly GuardEntry[];
}

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** What a tool's result cannot carry. */
const NOT_A_RESULT: Partial<Record<Contract['kind'], string>> = {
  events: 'an event stream',
  bytes: 'bytes',
  redirect: 'a redirect',
};

/**
 * The tools of one app: its `@Tool` routes checked at scan (each problem a Refusal line) and, once
 * the routes are built, described from the same OpenAPI operations the document holds, so a tool's
 * schemas are the document's.
 */
export class ToolTable {
  readonly #names = new Map<string, string>();
  #entries: ReadonlyMap<string, ToolEntry> = new Map();

  /** The tools by name. */
  get entries(): ReadonlyMap<string, ToolEntry> {
    return this.#entries;
  }

  readonly check: RecordCheck = (record, _services, problems) => {
    const tool = record.marks.get(TOOL);
    if (tool === undefined) return;
    const name = toolName(record);
    const at = `${record.label}: @Tool(${JSON.stringify(name)})`;
    if (!NAME.test(name))
      problems.push(`${at}: a tool name is 1 to 128 of A-Z a-z 0-9 _ . - (MCP's tool names)`);
    const other = this.#names.get(name);
    if (other !== undefined) problems.push(`${at}: ${other} is a tool of that name already`);
    else this.#names.set(name, record.label);
    for (const a of record.args) {
      if (a.kind === 'form')
        problems.push(`${at}: a tool's arguments are JSON; a @Form route cannot be a tool`);
      if (a.kind === 'body' && a.schema === undefined && !declares(a.type))
        problems.push(
          `${at}: its body has no runtime schema (a class with class-validator decorators, or a Standard Schema): a tool's inputSchema is made from it`,
        );
    }
    const kind = answerKind(record.contract);
    if (kind !== null) problems.push(`${at}: ${kind} is no tool result`);
  };

  /** Describes every tool from the app's document, after build; a tool it cannot describe is refused. */
  define(host: Host): void {
    const doc = openApiFeature().documentOf(host).doc;
    const schemas = doc.components.schemas as Schemas;
    const problems: string[] = [];
    const entries = new Map<string, ToolEntry>();
    for (const record of host.routes) {
      if (!record.marks.has(TOOL)) continue;
      const op = doc.paths[record.path]?.[record.method.toLowerCase()] as Operation | undefined;
      if (op === undefined) continue;
      const entry = entryOf(record, op, schemas, problems);
      if (entry !== null) entries.set(entry.definition.name, entry);
    }
    if (problems.length > 0) throw new RefusalError(problems);
    this.#entries = entries;
  }
}

/** What a tool reads of its route's OpenAPI operation. */
interface Operation {
  readonly parameters?: readonly {
    name: string;
    in: string;
    required: boolean;
    schema: JsonSchema;
  }[];
  readonly requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  readonly responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
}

function entryOf(
  record: RouteRecord,
  op: Operation,
  schemas: Schemas,
  problems: string[],
): ToolEntry | null {
  const tool = record.marks.get(TOOL)!;
  const name = toolName(record);
  const at = `${record.label}: @Tool(${JSON.stringify(name)})`;
  const input = inputOf(op, schemas, at, problems);
  if (input === null) return null;
  const idempotent = record.marks.has(IDEMPOTENT);
  const output = outputSchemaOf(record.contract, op, schemas);
  const safe = record.method === 'GET' || record.method === 'HEAD';
  const definition: ToolDefinition = {
    name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: describe(record, tool.description, idempotent),
    inputSchema: input.schema,
    ...(output === null ? {} : { outputSchema: output }),
    annotations: {
      ...(safe ? { readOnlyHint: true as const } : {}),
      ...(safe || idempotent || record.method === 'PUT' || record.method === 'DELETE'
        ? { idempotentHint: true as const }
        : {}),
    },
    ...(idempotent ? { _meta: { idempotencyKey: 'required' as const } } : {}),
  };
  return {
    definition,
    record,
    idempotent,
    pathNames: templateNames(record.path),
    queryNames: input.query,
    bodyNames: input.body,
    guards: record.marks.get(GUARD)?.guards ?? [],
  };
}

/** The flat input: path and query parameters, then the body's fields; a name used twice is refused. */
function inputOf(
  op: Operation,
  schemas: Schemas,
  at: string,
  problems: string[],
): { schema: JsonSchema; query: string[]; body: string[] | null } | null {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const query: string[] = [];
  for (const p of op.parameters ?? []) {
    if (p.in !== 'path' && p.in !== 'query') continue;
    properties[p.name] = p.schema;
    if (p.required) required.push(p.name);
    if (p.in === 'query') query.push(p.name);
  }
  let body: string[] | null = null;
  const declared = op.requestBody?.content?.['application/json']?.schema;
  if (declared !== undefined) {
    const object = deref(declared, schemas);
    const fields = object.properties as Record<string, JsonSchema> | undefined;
    if (object.type !== 'object' || fields === undefined) {
      problems.push(
        `${at}: its body is not described as an object with fields (a Standard Schema whose library gives no JSON Schema needs App({ jsonSchemaOf })): a tool's arguments are one flat object`,
      );
      return null;
    }
    body = [];
    for (const [field, s] of Object.entries(fields)) {
      if (s.readOnly === true) continue;
      if (field in properties) {
        problems.push(
          `${at}: argument ${JSON.stringify(field)} is both a parameter and a body field: a tool's arguments are one flat object`,
        );
        return null;
      }
      properties[field] = s;
      body.push(field);
    }
    for (const r of (object.required as string[] | undefined) ?? [])
      if (body.includes(r)) required.push(r);
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return { schema: standalone(schema, schemas), query, body };
}

/**
 * The output schema: the route's one success value when it is an object (not an array, not a
 * `Reply` of several statuses), as the document describes it; else none.
 */
function outputSchemaOf(
  contract: Contract | null,
  op: Operation,
  schemas: Schemas,
): JsonSchema | null {
  const status = oneStatus(contract, 200);
  if (status === null) return null;
  const schema = op.responses?.[String(status)]?.content?.['application/json']?.schema;
  if (schema === undefined || schema.oneOf !== undefined) return null;
  const object = deref(schema, schemas);
  if (object.type !== 'object') return null;
  return standalone(object, schemas);
}

/** The status of the contract's one JSON value, or null when it has none or several. */
function oneStatus(contract: Contract | null, status: number): number | null {
  if (contract === null) return null;
  switch (contract.kind) {
    case 'json':
      return Array.isArray(contract.type) ? null : status;
    case 'schema':
      return status;
    case 'status':
      return oneStatus(contract.inner, contract.status);
    case 'optional':
      return oneStatus(contract.inner, status);
    case 'own':
      return contract.inner === null ? null : oneStatus(contract.inner, status);
    case 'reply':
      return contract.statuses.length === 1
        ? oneStatus(
            contract.variants?.[contract.statuses[0]!] ?? contract.inner,
            contract.statuses[0]!,
          )
        : null;
    default:
      return null;
  }
}

/** What a contract answers that a tool result cannot carry, or null. */
function answerKind(contract: Contract | null): string | null {
  if (contract === null) return null;
  const kind = NOT_A_RESULT[contract.kind];
  if (kind !== undefined) return kind;
  if (contract.kind === 'own')
    return contract.inner === null ? `a ${contract.name} answer` : answerKind(contract.inner);
  if (contract.kind === 'status' || contract.kind === 'optional') return answerKind(contract.inner);
  return null;
}

function deref(schema: JsonSchema, schemas: Schemas): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/components/schemas/')) return schema;
  return schemas[ref.slice('#/components/schemas/'.length)] ?? {};
}

function describe(record: RouteRecord, given: string | undefined, idempotent: boolean): string {
  const what = given ?? record.summary ?? `${record.method} ${record.path}`;
  return idempotent
    ? `${what}. Idempotent: send a key of your own in params._meta.idempotencyKey; a retry with that key gives the first result and does the work once.`
    : what;
}

/** The tool's name: its own, or `orders_create` for `OrdersController.create`. */
export function toolName(record: RouteRecord): string {
  return record.marks.get(TOOL)?.name ?? `${snake(record.tag)}_${snake(record.key)}`;
}

const snake = (s: string): string =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .toLowerCase();

/** A class whose fields class-validator declares (what `@Body` validates a body with). */
function declares(type: Function): boolean {
  return type !== Object && readShape(type).properties.length > 0;
}
