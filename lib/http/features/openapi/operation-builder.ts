import { STATUS_CODES } from 'node:http';
import type {
  HeaderObject,
  MediaTypeObject,
  OperationSink,
  ParameterObject,
  SecurityDeclaration,
} from '../../route/extensions';
import type { RouteRecord } from '../../route/route-record';
import { JSON_TYPE } from '../../core/media-types';
import type { JsonSchemaOf } from '../../core/standard-schema';

export type { HeaderObject, ParameterObject } from '../../route/extensions';
import { schemaOf, type JsonSchema } from '../../schema';

/** One response: no `content` means no body (204, redirects). */
export interface ResponseObject {
  readonly description: string;
  readonly headers?: Readonly<Record<string, HeaderObject>>;
  readonly content?: Readonly<Record<string, MediaTypeObject>>;
}

export type SecurityScheme = 'bearer' | 'basic';

/** What the operations of one document share: the schemas and security schemes under `components`. */
export class Components {
  readonly schemas = new Map<string, object>();
  /** By name: `bearer` and `basic` for the plain schemes, a declaration's own name otherwise. */
  readonly securitySchemes = new Map<string, Readonly<Record<string, unknown>>>();
  /** Whether the failure shape has a `code` property, where declared codes become an enum. */
  failureHasCode = false;
  /** The App's `jsonSchemaOf`, for Standard Schemas whose library has no JSON Schema of its own. */
  jsonSchemaOf: JsonSchemaOf | null = null;
}

const PLAIN_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer' },
  basic: { type: 'http', scheme: 'basic' },
} as const;

export const FAILURE_REF = Object.freeze({ $ref: '#/components/schemas/Failure' });

const phrase = (status: number): string => STATUS_CODES[status] ?? `Status ${status}`;

interface Response {
  description: string;
  reasons: string[];
  headers: Map<string, HeaderObject>;
  content: Record<string, MediaTypeObject> | null;
  failure: boolean;
  /** A contract answer that a failure shares its status with. */
  mixed?: boolean;
}

/**
 * The operation of one route while the document is built. The core describes parameters, the body
 * and the answers of the contract; then every capability's `describe` adds its own pieces
 * (idempotency's header and extra answers, Versioned's ETag and 304) through these methods.
 *
 * @example
 * describe(record, op) {
 *   op.parameter({ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } });
 *   op.failure(409, 'the key is still being answered', { 'Retry-After': { schema: { type: 'integer' } } });
 * }
 */
export class OperationBuilder implements OperationSink {
  readonly record: RouteRecord;
  readonly #components: Components;
  readonly #parameters: ParameterObject[] = [];
  readonly #responses = new Map<number, Response>();
  /** Scheme name → scopes, in the order they were required. */
  readonly #security = new Map<string, string[]>();
  #body: {
    schema: JsonSchema;
    contentType: string;
    required: boolean;
    encoding?: Record<string, { contentType: string }>;
  } | null = null;
  #deprecated = false;
  readonly #tags: string[] = [];
  #summary: string | null = null;
  #description: string | null = null;
  #externalDocs: { readonly url: string; readonly description?: string } | null = null;
  readonly #extensions = new Map<string, unknown>();
  readonly #codes = new Map<number, string[]>();

  constructor(record: RouteRecord, components: Components) {
    this.record = record;
    this.#components = components;
  }

  /** Describes a class under `components.schemas` (nested classes too) and returns its `$ref`. */
  schemaOf(cls: Function): { $ref: string } {
    return schemaOf(cls, this.#components.schemas);
  }

  /** The App's `jsonSchemaOf` (null when none). */
  get jsonSchemaOf(): JsonSchemaOf | null {
    return this.#components.jsonSchemaOf;
  }

  /** The document's `components.schemas`, for `valueSchema` and friends. */
  get schemas(): Map<string, object> {
    return this.#components.schemas;
  }

  /** Adds a parameter; one with the same place and name replaces the earlier one. */
  parameter(p: ParameterObject): this {
    const key = (q: ParameterObject) =>
      `${q.in}:${q.in === 'header' ? q.name.toLowerCase() : q.name}`;
    const at = this.#parameters.findIndex((q) => key(q) === key(p));
    if (at === -1) this.#parameters.push(p);
    else this.#parameters[at] = p;
    return this;
  }

  /** Marks the operation `deprecated: true`. */
  deprecated(): this {
    this.#deprecated = true;
    return this;
  }

  /** Adds a tag after the route's own (its controller's). */
  tag(name: string): this {
    if (name !== this.record.tag && !this.#tags.includes(name)) this.#tags.push(name);
    return this;
  }

  /** Replaces the route's summary. */
  summary(text: string): this {
    this.#summary = text;
    return this;
  }

  /** Sets the operation's description (CommonMark). */
  description(text: string): this {
    this.#description = text;
    return this;
  }

  /** Points to documentation elsewhere. */
  externalDocs(docs: { readonly url: string; readonly description?: string }): this {
    this.#externalDocs = docs;
    return this;
  }

  /** Sets an `x-` member of the operation. */
  extension(name: `x-${string}`, value: unknown): this {
    this.#extensions.set(name, value);
    return this;
  }

  /** Sets the request body. */
  body(
    schema: JsonSchema,
    options: {
      contentType?: string;
      required?: boolean;
      encoding?: Record<string, { contentType: string }>;
    } = {},
  ): this {
    this.#body = {
      schema,
      contentType: options.contentType ?? JSON_TYPE,
      required: options.required ?? true,
      ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    };
    return this;
  }

  /** Lists a success (or any non-failure) answer; `content` omitted means no body. Replaces an earlier one of that status. */
  answer(
    status: number,
    response: {
      description?: string;
      content?: Record<string, MediaTypeObject>;
      headers?: Record<string, HeaderObject>;
    } = {},
  ): this {
    const prior = this.#responses.get(status);
    this.#responses.set(status, {
      description: response.description ?? phrase(status),
      reasons: [],
      headers: new Map([...(prior?.headers ?? []), ...Object.entries(response.headers ?? {})]),
      content: response.content ?? null,
      failure: false,
    });
    return this;
  }

  /**
   * Lists a failure answer with the `Failure` body. `reason` says when it happens; several
   * contributors to one status have their reasons joined.
   */
  failure(status: number, reason?: string, headers: Record<string, HeaderObject> = {}): this {
    let r = this.#responses.get(status);
    if (r === undefined) {
      r = {
        description: phrase(status),
        reasons: [],
        headers: new Map(),
        content: { [JSON_TYPE]: { schema: FAILURE_REF } },
        failure: true,
      };
      this.#responses.set(status, r);
    } else if (!r.failure && !r.mixed) {
      // The contract answers this status too (`Reply({ 409: AlreadyCancelled })`): either body may come.
      r.mixed = true;
      const content = (r.content ??= {});
      const json = content[JSON_TYPE];
      content[JSON_TYPE] = {
        schema: json === undefined ? FAILURE_REF : { oneOf: [json.schema, FAILURE_REF] },
      };
      if (json !== undefined) r.reasons.push('the answer the route declares');
    }
    if (reason !== undefined && !r.reasons.includes(reason)) r.reasons.push(reason);
    for (const [name, h] of Object.entries(headers)) r.headers.set(name, h);
    return this;
  }

  /** Codes a failure of `status` may carry; written as an enum on `code` when the failure shape has one. */
  codes(status: number, codes: readonly string[]): this {
    const list = this.#codes.get(status) ?? [];
    for (const c of codes) if (!list.includes(c)) list.push(c);
    this.#codes.set(status, list);
    return this;
  }

  /** The response of `status`, its failure schema narrowed to the declared codes where the shape has a `code`. */
  #coded(status: number): Response {
    const r = this.#responses.get(status)!;
    const codes = this.#codes.get(status);
    if (codes === undefined || !this.#components.failureHasCode || r.content === null) return r;
    const narrowed = {
      allOf: [
        FAILURE_REF,
        {
          type: 'object',
          properties: { code: { type: 'string', enum: codes } },
          required: ['code'],
        },
      ],
    };
    const content: Record<string, MediaTypeObject> = {};
    for (const [type, c] of Object.entries(r.content)) {
      const oneOf = c.schema?.oneOf as JsonSchema[] | undefined;
      if (c.schema === FAILURE_REF) content[type] = { schema: narrowed };
      else if (oneOf?.includes(FAILURE_REF))
        content[type] = { schema: { oneOf: oneOf.map((s) => (s === FAILURE_REF ? narrowed : s)) } };
      else content[type] = c;
    }
    return { ...r, content };
  }

  /** Adds a header to the answer of `status` (listed already). */
  header(status: number, name: string, header: HeaderObject): this {
    this.#responses.get(status)?.headers.set(name, header);
    return this;
  }

  /** The statuses listed so far, ascending. */
  get statuses(): number[] {
    return [...this.#responses.keys()].sort((a, b) => a - b);
  }

  /** The statuses the return contract answers (every success, and a `Reply` variant such as 409), not the failures. */
  get answerStatuses(): number[] {
    return this.statuses.filter((s) => !this.#responses.get(s)!.failure);
  }

  /** Requires an `Authorization` scheme (listed under `components.securitySchemes`), with the scopes it needs. */
  security(scheme: SecurityScheme | SecurityDeclaration, scopes: readonly string[] = []): this {
    const name = typeof scheme === 'string' ? scheme : scheme.name;
    const object = typeof scheme === 'string' ? PLAIN_SCHEMES[scheme] : scheme.scheme;
    const known = this.#components.securitySchemes.get(name);
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(object))
      throw new TypeError(
        `${this.record.label}: two different security schemes are named "${name}": give one a schemeName of its own`,
      );
    this.#components.securitySchemes.set(name, object);
    const list = this.#security.get(name) ?? [];
    for (const s of scopes) if (!list.includes(s)) list.push(s);
    this.#security.set(name, list);
    return this;
  }

  /** The operation object, keys in a fixed order so the document diffs well. */
  toJSON(): Record<string, unknown> {
    const r = this.record;
    const op: Record<string, unknown> = { tags: [r.tag, ...this.#tags] };
    const summary = this.#summary ?? r.summary;
    if (summary !== undefined) op.summary = summary;
    if (this.#description !== null) op.description = this.#description;
    if (this.#externalDocs !== null) op.externalDocs = this.#externalDocs;
    op.operationId = r.operationId;
    if (this.#deprecated) op.deprecated = true;
    // Every scheme a route takes must be sent, so they go in one requirement object (AND).
    if (this.#security.size) op.security = [Object.fromEntries(this.#security)];
    if (this.#parameters.length) op.parameters = this.#parameters.map(parameterJson);
    if (this.#body) {
      const media = {
        schema: this.#body.schema,
        ...(this.#body.encoding === undefined ? {} : { encoding: this.#body.encoding }),
      };
      op.requestBody = {
        required: this.#body.required,
        content: { [this.#body.contentType]: media },
      };
    }
    const responses: Record<string, unknown> = {};
    for (const status of this.statuses)
      responses[String(status)] = responseJson(this.#coded(status));
    op.responses = responses;
    for (const [name, value] of this.#extensions) op[name] = value;
    return op;
  }
}

function parameterJson(p: ParameterObject): Record<string, unknown> {
  const out: Record<string, unknown> = { name: p.name, in: p.in };
  if (p.description !== undefined) out.description = p.description;
  out.required = p.required;
  out.schema = p.schema;
  return out;
}

function responseJson(r: Response): Record<string, unknown> {
  const out: Record<string, unknown> = {
    description: r.reasons.length ? `${r.description}: ${r.reasons.join('; ')}` : r.description,
  };
  if (r.headers.size) out.headers = Object.fromEntries(r.headers);
  if (r.content !== null) out.content = r.content;
  return out;
}
