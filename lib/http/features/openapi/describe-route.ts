import { rootSchema, standardJsonSchema, type StandardSchema } from '../../core/standard-schema';
import { hoistDefs, schemaComponent } from './schema-component';
import type { Contract, Shape } from '../../core/answers';
import { CHALLENGE } from '../../core/authorization';
import type { RouteRecord } from '../../route/route-record';
import { templateNames } from '../../core/router';
import { EVENT_STREAM, JSON_TYPE, OCTET_STREAM, TEXT_MEDIA_TYPE } from '../../core/media-types';
import {
  inlineSchemaOf,
  readShape,
  scalarSchema,
  valueSchema,
  type JsonSchema,
} from '../../schema';
import type { OperationBuilder, SecurityScheme } from './operation-builder';
import type { OperationSink, SecurityDeclaration } from '../../route/extensions';

const BINARY: JsonSchema = Object.freeze({ type: 'string', format: 'binary' });

type Argument = RouteRecord['args'][number];
type FormArgument = Extract<Argument, { kind: 'form' }>;

/**
 * The core's part of an operation: parameters, request body, success answers and the failures the
 * arguments imply. `answered`: a capability describes the route's success answers itself (see
 * `Capability.answersItself`), so none is guessed for a route without `@Returns`.
 */
export function describeRoute(record: RouteRecord, op: OperationBuilder, answered = false): void {
  // The contract first: a failure that shares a status with a declared answer is merged into it.
  if (record.contract !== null) describeContract(record.contract, op, null);
  else if (!answered) describeInferred(record, op);
  describeArguments(record, op);
  for (const status of record.failures ?? []) op.failure(status);
}

function describeArguments(record: RouteRecord, op: OperationBuilder): void {
  // Why a 400 can come, one reason per way: a route whose arguments cannot be refused lists none.
  const unread: string[] = [];
  describePathParams(record, op, unread);
  for (const a of record.args) describeArgument(a, op, unread);
  for (const why of unread) op.failure(400, why);
  // A resolved value usually stands for the caller (an account from a token), and resolvers answer
  // 401 when there is none. The scheme it reads is claimed only when the class says so
  // (`static authorization = 'bearer' as const`).
  if (record.args.some((a) => a.kind === 'resolved'))
    op.failure(401, 'the caller could not be worked out');
}

/** Path parameters come first, in template order, whatever the order of the arguments. */
function describePathParams(record: RouteRecord, op: OperationBuilder, unread: string[]): void {
  const names = templateNames(record.path);
  const params = record.args
    .flatMap((a) => (a.kind === 'param' ? [a] : []))
    .sort((a, b) => names.indexOf(a.name) - names.indexOf(b.name));
  for (const a of params) {
    op.parameter({ name: a.name, in: 'path', required: true, schema: scalar(a.type) });
    // A text path parameter is handed over as matched: no value of it is refused.
    const why = notConverted(a.type);
    if (why !== null) unread.push(`path param "${a.name}" is not ${why}`);
  }
}

/** One argument's parameters, body and security; why it may be refused goes into `unread`. */
function describeArgument(a: Argument, op: OperationBuilder, unread: string[]): void {
  switch (a.kind) {
    case 'queryClass':
      unread.push('the query does not read as declared', TOO_MANY_QUERY);
      for (const p of readShape(a.type).properties)
        op.parameter({
          name: p.name,
          in: 'query',
          required: p.required,
          schema: valueSchema(p.value, op.schemas),
        });
      break;
    case 'querySchema':
      unread.push('the query does not read as declared', TOO_MANY_QUERY);
      describeQuerySchema(a.schema, op);
      break;
    case 'query': {
      const why = notConverted(a.type);
      if (why !== null) unread.push(`query param "${a.name}" is not ${why}`);
      unread.push(TOO_MANY_QUERY);
      op.parameter({ name: a.name, in: 'query', required: false, schema: scalar(a.type) });
      break;
    }
    case 'header':
      // A header is handed over as it was sent (text or null), whatever the parameter's type says.
      op.parameter({ name: a.name, in: 'header', required: false, schema: { type: 'string' } });
      break;
    case 'body':
      unread.push('the body is not JSON or does not read as declared');
      op.body(
        a.schema === undefined
          ? op.schemaOf(a.type)
          : schemaComponent(a.schema, 'input', `${op.record.operationId}.Body`, op),
      );
      op.failure(413, 'the body is larger than 1 MiB');
      op.failure(415, 'the body is not application/json');
      break;
    case 'form':
      if (a.files.length > 0) describeUpload(a, op, unread);
      else describeForm(a, op, unread);
      break;
    case 'authorization':
      requireScheme(op, a.scheme);
      break;
    case 'resolved':
      describeResolved(op, a.type);
      break;
    default:
      break;
  }
}

/**
 * A form without files, sent urlencoded. A bound form hands a refused reading to the handler
 * (which may answer 422): its 400 is for a body that is no form or has too many fields.
 */
function describeForm(a: FormArgument, op: OperationBuilder, unread: string[]): void {
  unread.push(
    a.bound
      ? 'the body is not a form or has too many fields'
      : 'the body is not a form or does not read as declared',
  );
  op.body(op.schemaOf(a.type), { contentType: 'application/x-www-form-urlencoded' });
  op.failure(413, 'the body is larger than 1 MiB');
  if (a.bound) op.failure(422, "the form's fields are refused");
}

/**
 * A form with files: a `multipart/form-data` body whose fields carry their constraints and whose
 * files are 3.1 binary strings (`contentMediaType` when one type is accepted, `encoding` lists them
 * all), with the answers its limits give.
 */
function describeUpload(a: FormArgument, op: OperationBuilder, unread: string[]): void {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of readShape(a.type).properties) {
    properties[p.name] = valueSchema(p.value, op.schemas);
    if (p.required) required.push(p.name);
  }
  const encoding: Record<string, { contentType: string }> = {};
  for (const f of a.files) {
    const types = f.options.types ?? [];
    const bytes = f.options.maxBytes;
    const one: JsonSchema = {
      type: 'string',
      format: 'binary',
      ...(types.length === 1 ? { contentMediaType: types[0] } : {}),
      description: `A file${bytes === undefined ? '' : ` of at most ${bytes} bytes`}${types.length > 0 ? `: ${types.join(', ')}` : ''}`,
    };
    properties[f.name] = f.many
      ? {
          type: 'array',
          items: one,
          ...(f.options.count === undefined ? {} : { maxItems: f.options.count }),
        }
      : one;
    if (f.options.required ?? true) required.push(f.name);
    if (types.length > 0) encoding[f.name] = { contentType: types.join(', ') };
  }
  const schema: JsonSchema = {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
  };
  op.body(schema, {
    contentType: 'multipart/form-data',
    ...(Object.keys(encoding).length > 0 ? { encoding } : {}),
  });
  unread.push(
    a.bound
      ? 'the body is not a form, or a part is malformed'
      : 'the body is not a form, a field does not read as declared or a required file is missing',
  );
  op.failure(413, 'a file, a field or the form is past its limit (the message names it)');
  if (a.files.some((f) => f.options.types !== undefined))
    op.failure(415, 'a file is not of an accepted type');
  if (a.bound) op.failure(422, "the form's fields are refused");
}

const TOO_MANY_QUERY = 'the query has more parameters than the app allows (maxParams)';

/** What a text value must be to become the parameter's type, or null when any text is taken. */
function notConverted(type: unknown): string | null {
  if (type === Number) return 'a number';
  if (type === Boolean) return 'a boolean (true or false)';
  return null;
}

/** The security requirement, scheme and 401 (with its challenge) of a route that reads `scheme`. */
function requireScheme(op: OperationBuilder, scheme: SecurityScheme): void {
  op.security(scheme);
  op.failure(401, `the Authorization header is missing or not ${CHALLENGE[scheme].split(' ')[0]}`, {
    'WWW-Authenticate': {
      description: 'The scheme that would be accepted',
      schema: { type: 'string' },
      example: CHALLENGE[scheme],
    },
  });
}

/** The security a resolved class declares: its own `static security`, or its `static authorization`. */
function describeResolved(op: OperationBuilder, type: Function): void {
  const declared = declaredSecurity(type);
  if (declared !== null) requireDeclared(op, declared, []);
  else {
    const scheme = resolvedScheme(type);
    if (scheme !== null) requireScheme(op, scheme);
  }
}

/** A resolver's own `static security` (a JWT resolver's), or null. */
export function declaredSecurity(type: Function): SecurityDeclaration | null {
  const s = (type as { security?: unknown }).security;
  if (typeof s !== 'object' || s === null) return null;
  const d = s as SecurityDeclaration;
  return typeof d.name === 'string' &&
    typeof d.scheme === 'object' &&
    typeof d.challenge === 'string'
    ? d
    : null;
}

/** The security requirement of a declared scheme, with its scopes, and its 401 (with its challenge). */
export function requireDeclared(
  op: OperationSink,
  d: SecurityDeclaration,
  scopes: readonly string[],
): void {
  op.security(d, scopes);
  op.failure(401, 'the bearer token is missing or invalid', {
    'WWW-Authenticate': {
      description:
        'RFC 6750: `Bearer` without a token, `Bearer error="invalid_token"` for a bad one',
      schema: { type: 'string' },
      example: 'Bearer error="invalid_token"',
    },
  });
}

/**
 * The scheme a resolved class reads, from its `static authorization` ('bearer' or 'basic'), or
 * null when it says none. Anything else is a mistake the document cannot describe.
 */
export function resolvedScheme(type: Function): SecurityScheme | null {
  const scheme = (type as { authorization?: unknown }).authorization;
  if (scheme === undefined) return null;
  if (scheme === 'bearer' || scheme === 'basic') return scheme;
  throw new TypeError(
    `${type.name}.authorization must be 'bearer' or 'basic' (the scheme its resolve reads), got ${JSON.stringify(scheme) ?? String(scheme)}`,
  );
}

/** The success answers a contract gives; `status` is set by a wrapper (`Status`, `Reply`). */
export function describeContract(
  contract: Contract,
  op: OperationBuilder,
  status: number | null,
): void {
  switch (contract.kind) {
    case 'json':
      op.answer(status ?? 200, {
        content: { [JSON_TYPE]: { schema: jsonSchema(contract.type, op) } },
      });
      break;
    case 'schema':
      describeSchemaAnswer(contract.schema, op, status ?? 200);
      break;
    case 'text':
      op.answer(status ?? 200, { content: { [TEXT_MEDIA_TYPE]: { schema: { type: 'string' } } } });
      break;
    case 'void':
      op.answer(204);
      break;
    case 'bytes':
      // The content type is chosen per answer at run time; a capability may describe it better.
      op.answer(status ?? 200, { content: { [OCTET_STREAM]: { schema: BINARY } } });
      break;
    case 'self':
      describeSelfAnswer(contract.type, op, status ?? 200);
      break;
    case 'status':
      describeContract(contract.inner, op, contract.status);
      break;
    case 'optional':
      describeContract(contract.inner, op, status);
      op.failure(404, 'there is none');
      break;
    case 'reply':
      for (const s of contract.statuses)
        describeContract(contract.variants?.[s] ?? contract.inner, op, s);
      break;
    case 'redirect':
      describeRedirect(op, contract.status);
      break;
    case 'events':
      op.answer(status ?? 200, {
        description: `A server-sent event stream${eventData(contract)} (never buffered, never compressed)`,
        content: { [EVENT_STREAM]: { itemSchema: eventSchema(contract, op) } },
      });
      break;
    case 'own':
      // A wrapper's body is its inner contract's; a leaf's is bytes of a type chosen at run time
      // (a FileBody's). The capability adds its own (Versioned: the ETag and 304) in its describe.
      if (contract.inner !== null) describeContract(contract.inner, op, status);
      else op.answer(status ?? 200, { content: { [OCTET_STREAM]: { schema: BINARY } } });
      break;
  }
}

/**
 * One event of a stream, as OpenAPI 3.2 describes `text/event-stream` items: its fields as strings.
 * A typed stream's `data` is JSON text (`contentMediaType`) whose `contentSchema` is the declared
 * type; its `event` is the declared one, and `id` is there when each event carries one. An untyped
 * stream may send any of the four fields.
 */
function eventSchema(
  contract: Extract<Contract, { kind: 'events' }>,
  op: OperationBuilder,
): JsonSchema {
  const data = contract.data;
  if (data === null)
    return {
      type: 'object',
      required: ['data'],
      properties: {
        event: { type: 'string' },
        data: { type: 'string' },
        id: { type: 'string' },
        retry: { type: 'integer', minimum: 0 },
      },
    };
  const contentSchema =
    data.kind === 'schema'
      ? schemaComponent(data.schema, 'output', `${op.record.operationId}.Event`, op)
      : eventDataSchema((data as Extract<Contract, { kind: 'json' }>).type, op);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  if (contract.event !== null) {
    properties.event = { type: 'string', const: contract.event };
    required.push('event');
  }
  properties.data = { type: 'string', contentMediaType: JSON_TYPE, contentSchema };
  required.push('data');
  if (contract.ids) {
    properties.id = { type: 'string' };
    required.push('id');
  }
  return { type: 'object', required, properties };
}

/** What each event's data is, said in the description too: viewers that draw no itemSchema show that. */
function eventData(contract: Extract<Contract, { kind: 'events' }>): string {
  const data = contract.data;
  if (data === null) return '';
  const type = data.kind === 'json' ? data.type : null;
  const name = typeof type === 'function' && type !== Object ? type.name : '';
  const named = contract.event === null ? 'each event' : `each ${contract.event} event`;
  return `: ${named}'s data is ${name === '' ? 'JSON' : `a ${name} as JSON`}`;
}

/** A class's fields written out where the event is described (its nested classes stay references). */
function eventDataSchema(type: Shape | readonly [Shape], op: OperationBuilder): JsonSchema {
  if (
    typeof type !== 'function' ||
    type === Object ||
    type === String ||
    type === Number ||
    type === Boolean
  )
    return jsonSchema(type, op);
  return inlineSchemaOf(type, op.schemas);
}

/** A redirect: no body, a Location header. */
function describeRedirect(op: OperationBuilder, status: number): void {
  op.answer(status, {
    headers: {
      Location: {
        description: 'Where to go',
        required: true,
        schema: { type: 'string', format: 'uri-reference' },
      },
    },
  });
}

/** A class that writes itself: its `static contentType` and `static openapi`, else bytes as text. */
function describeSelfAnswer(self: Shape, op: OperationBuilder, status: number): void {
  const type = self as unknown as { contentType?: string; openapi?: JsonSchema };
  op.answer(status, {
    content: {
      [type.contentType ?? OCTET_STREAM]: {
        schema: type.openapi ? { ...type.openapi } : { type: 'string' },
      },
    },
  });
}

/**
 * A route without `@Returns` answers 204 (one whose TypeScript return type is a value is refused at
 * build), unless it answers through the Ctx, which chooses status and type at run time.
 */
function describeInferred(record: RouteRecord, op: OperationBuilder): void {
  if (record.args.some((a) => a.kind === 'ctx'))
    op.answer(200, {
      description: 'Answered through the Ctx: status and content type are chosen at run time',
    });
  else op.answer(204);
}

function jsonSchema(type: unknown, op: OperationBuilder): JsonSchema {
  if (Array.isArray(type)) return { type: 'array', items: jsonSchema(type[0], op) };
  if (type === String || type === Number || type === Boolean) return scalarSchema(type as Function);
  if (type === Object || typeof type !== 'function') return {};
  return op.schemaOf(type as Function);
}

function scalar(type: unknown): JsonSchema {
  return typeof type === 'function' ? scalarSchema(type) : {};
}

/** A Standard Schema answer: its output JSON Schema as a component, named by it or after the route. */
function describeSchemaAnswer(schema: StandardSchema, op: OperationBuilder, status: number): void {
  const name = `${op.record.operationId}.${status}`;
  const ref = schemaComponent(schema, 'output', name, op);
  op.answer(status, { content: { [JSON_TYPE]: { schema: ref } } });
}

/**
 * `@Query(schema)`: one parameter per property of the schema's JSON Schema (input side), required
 * as its `required` says. A library without a JSON Schema leaves the query undescribed.
 */
function describeQuerySchema(schema: StandardSchema, op: OperationBuilder): void {
  const found = standardJsonSchema(schema, 'input', op.jsonSchemaOf);
  if (found === null) return;
  // Its properties, their `$defs` references (zod's `.meta({ id })`) pointing at components.
  const root = rootSchema(found);
  const json = JSON.stringify(root.properties ?? {}).includes('"#/$defs/')
    ? hoistDefs(root, 'input', op.schemas)
    : root;
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(json.required) ? (json.required as string[]) : []);
  for (const [name, s] of Object.entries(properties))
    op.parameter({ name, in: 'query', required: required.has(name), schema: s });
}
