import {
  schemaValue,
  type JsonSchemaOf,
  type StandardResult,
  type StandardSchema,
} from '../core/standard-schema';
import { checkWhole } from '../../options';
import { fail } from '../core/fail';
import { Bound } from '../core/bound';
import { type Ctx } from '../request/ctx';
import { isThenable } from '../core/thenable';
import { Failure, HttpError } from '../core/errors';
import type { ArgRecord } from '../route/route-record';
import type { UploadPlan } from '../request/read-upload';
import type { UploadLimits } from '../request/uploaded-file';
import { uploadFormExtractor } from './upload-form';
import { schemaQuery } from './schema-query';
import {
  MAX_PARAMS,
  TOO_MANY,
  compileReader,
  declaredNames,
  firstParam,
  readParams,
} from '../schema';
import { exchangeOf } from '../request/exchange-of';

/** Works out one handler argument from the request: a value, or a promise of one. */
export type Extractor = (c: Ctx) => unknown;

const FORM_CONTENT = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;
const JSON_CONTENT = /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i;

/** The bounds on reading arguments, from the App's options. */
export interface ReadingOptions {
  /** Parameters in a query string or a form body (default 10,000); past it → 400 `TooManyParams`. */
  readonly maxParams?: number | undefined;
  /** Levels of nested objects and arrays read into a body's class (default 64); past it → 400 `NestedTooDeep`. */
  readonly maxDepth?: number | undefined;
  /** The JSON Schema of a Standard Schema whose library has none of its own (`App({ jsonSchemaOf })`). */
  readonly jsonSchemaOf?: JsonSchemaOf | undefined;
  /** The app's multipart form limits (`App({ uploads })`). */
  readonly uploads?: Partial<UploadLimits> | undefined;
}

/** Compiles one argument record into its extractor, once, at build. `names` are the path's `{name}`s in order. */
export function compileArgument(
  arg: ArgRecord,
  names: readonly string[],
  reading: ReadingOptions = {},
  upload: UploadPlan | null = null,
): Extractor {
  switch (arg.kind) {
    case 'ctx':
      return (c) => c;
    case 'service': {
      const instance = arg.instance;
      return () => instance;
    }
    case 'resolved': {
      const type = arg.type as unknown as { resolve(c: Ctx): unknown };
      return (c) => c.resolving(type);
    }
    case 'authorization': {
      const scheme = arg.scheme;
      return (c) => c.authorization(scheme);
    }
    case 'header': {
      const name = arg.name;
      return (c) => c.header(name);
    }
    case 'param':
      return paramExtractor(arg.name, arg.type, names);
    case 'query':
      return queryExtractor(arg.name, arg.type, paramsBound(reading));
    case 'queryClass':
      return queryClassExtractor(arg.type, paramsBound(reading));
    case 'querySchema':
      return schemaQuery(arg.schema, paramsBound(reading), reading.jsonSchemaOf ?? null);
    case 'form':
      return formExtractor(arg, paramsBound(reading), upload);
    case 'body':
      if (arg.schema !== undefined) return schemaBody(arg.schema);
      return bodyExtractor(arg.type, reading.maxDepth);
  }
}

/** A `{name}` of the path, percent-decoded and converted to its declared type. */
function paramExtractor(name: string, type: unknown, names: readonly string[]): Extractor {
  const at = names.indexOf(name);
  const label = `path param "${name}"`;
  const convert = converter(type, label);
  return (c) => convert(decode(exchangeOf(c).values[at]!, label));
}

/** One query parameter (its first value), converted to its declared type, or null when absent. */
function queryExtractor(name: string, type: unknown, maxParams: number): Extractor {
  const convert = converter(type, `query param "${name}"`);
  return (c) => {
    const v = firstParam(c.rawQuery, name, maxParams);
    if (v === TOO_MANY) throw tooMany('query', maxParams);
    return v === null ? null : convert(v);
  };
}

/** The query read into a class: only its declared names are kept, 400 at the first refused one. */
function queryClassExtractor(type: Function, maxParams: number): Extractor {
  const read = compileReader(type, { source: 'query' });
  const keep = declaredNames(type);
  return (c) => {
    const input = readParams(c.rawQuery, keep, maxParams);
    if (input === TOO_MANY) throw tooMany('query', maxParams);
    const r = read(input);
    if (!r.ok) throw new Failure(400, r.message);
    return r.value;
  };
}

/** A `@Form()`: urlencoded, or multipart when its class declares files (`upload`). */
function formExtractor(
  arg: Extract<ArgRecord, { kind: 'form' }>,
  maxParams: number,
  upload: UploadPlan | null,
): Extractor {
  const bound = arg.bound;
  // A Bound form's handler shows the person every field to mend at once; a plain form fails 400 at the first.
  const read = compileReader(arg.type, { source: 'query', allFields: bound });
  if (upload !== null) return uploadFormExtractor(arg, upload, read, maxParams);
  // A Bound form keeps every field as sent (`b.fields`), to show the form again; a plain one only what it reads.
  const keep = bound ? null : declaredNames(arg.type);
  return (c) => {
    const type = exchangeOf(c).req.headers['content-type'];
    if (type === undefined || !FORM_CONTENT.test(type))
      throw fail.badRequest('form: must be sent as application/x-www-form-urlencoded');
    return exchangeOf(c).afterBody((bytes) => {
      const input = readParams(bytes.toString('utf8'), keep, maxParams);
      if (input === TOO_MANY) throw tooMany('form', maxParams);
      const r = read(input);
      if (bound)
        return new Bound(
          r.ok ? r.value : null,
          r.ok ? [] : (r.all ?? [r.message]).map(asForm),
          input,
        );
      if (!r.ok) throw new Failure(400, asForm(r.message));
      return r.value;
    });
  };
}

/** A JSON body read into a class; nested deeper than `maxDepth` is 400 `NestedTooDeep`. */
function bodyExtractor(type: Function, maxDepth: number | undefined): Extractor {
  const read = compileReader(type, { source: 'body', maxDepth });
  return (c) =>
    jsonBody(c, (parsed) => {
      const r = read(parsed);
      if (!r.ok)
        throw r.tooDeep ? new HttpError('NestedTooDeep', r.message) : new Failure(400, r.message);
      return r.value;
    });
}

/**
 * The request body as JSON, handed to `then` once it is all here: 415 for another content type,
 * 400 for text that is not JSON (an empty body parses as invalid too).
 */
function jsonBody(c: Ctx, then: (parsed: unknown) => unknown): unknown {
  const type = exchangeOf(c).req.headers['content-type'];
  if (type !== undefined && !JSON_CONTENT.test(type))
    throw new Failure(
      415,
      `body: content type must be application/json, got ${type.split(';')[0]}`,
    );
  return exchangeOf(c).afterBody((bytes) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.length === 0 ? '' : bytes.toString('utf8'));
    } catch {
      throw fail.badRequest('body: invalid JSON');
    }
    return then(parsed);
  });
}

function paramsBound(reading: ReadingOptions): number {
  return checkWhole({ where: '' }, 'maxParams', reading.maxParams ?? MAX_PARAMS, { min: 1 });
}

const tooMany = (where: 'query' | 'form', max: number) =>
  new HttpError('TooManyParams', `${where}: more than ${max} parameters`);

/** The reader names a form's fields as a query's: `query.age` is `form.age`. */
const asForm = (message: string): string => message.replace(/^query/, 'form');

function decode(raw: string, label: string): string {
  if (raw.indexOf('%') === -1) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw fail.badRequest('%s: malformed percent-encoding', label);
  }
}

const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/;

/** Converts a text value to the declared scalar type (number, boolean or string); 400 naming it otherwise. */
function converter(type: unknown, label: string): (v: string) => unknown {
  if (type === Number) {
    return (v) => {
      if (!NUMBER.test(v)) throw fail.badRequest('%s: not a number', label);
      return Number(v);
    };
  }
  if (type === Boolean) {
    return (v) => {
      if (v === 'true' || v === '1') return true;
      if (v === 'false' || v === '0') return false;
      throw fail.badRequest('%s: not a boolean (true or false)', label);
    };
  }
  return (v) => v;
}

/**
 * The step that works out a route's arguments and calls `then(c, args)` with them, built once per
 * route. It stays synchronous until an extractor gives a promise, then waits for the rest.
 */
export function compileGather(
  extract: readonly Extractor[],
  then: (c: Ctx, args: unknown[]) => unknown,
): (c: Ctx) => unknown {
  const n = extract.length;
  const fill = (c: Ctx, args: unknown[], from: number): unknown => {
    for (let i = from; i < n; i++) {
      const v = extract[i]!(c);
      if (isThenable(v)) return resume(c, args, i, v);
      args[i] = v;
    }
    return then(c, args);
  };
  // One promise hop per asynchronous argument (usually just the body), no async-function frame.
  const resume = (c: Ctx, args: unknown[], at: number, pending: PromiseLike<unknown>) =>
    Promise.resolve(pending).then((v) => {
      args[at] = v;
      return fill(c, args, at + 1);
    });
  return (c) => fill(c, new Array<unknown>(n), 0);
}

/** A JSON body validated by a Standard Schema: its value, or 400 naming the first failing path. */
function schemaBody(schema: StandardSchema): Extractor {
  const validate = schema['~standard'].validate.bind(schema['~standard']);
  const settle = (r: StandardResult<unknown>): unknown => schemaValue('body', r);
  return (c) =>
    jsonBody(c, (parsed) => {
      const r = validate(parsed);
      return isThenable(r) ? Promise.resolve(r).then(settle) : settle(r);
    });
}
