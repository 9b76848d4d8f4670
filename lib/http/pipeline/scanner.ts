import { isStandardSchema, type StandardSchema } from '../core/standard-schema';
import { REDIRECT_STATUSES, innerContracts, type Contract, type Shape } from '../core/answers';
import { Bound } from '../core/bound';
import { Ctx } from '../request/ctx';
import { marks, type ParamMark, type RouteMark } from '../route/metadata';
import type { ArgRecord, RouteRecord } from '../route/route-record';
import { templateNames } from '../core/router';
import { unseenNested } from '../schema';
import { declaredFiles } from '../route/upload-decorators';
import type { RecordCheck, Services } from '../route/extensions';
import { keyName, providedFor } from './provided-for';

/** The services an app was given, by type. */
export interface Scanned {
  readonly records: RouteRecord[];
  readonly instances: Map<Function, object>;
}

/** Per-record checks that other capabilities add (idempotency, versioned answers …), each next to its own code. */

const typeName = (t: unknown): string =>
  typeof t === 'function' ? t.name || 'anonymous' : String(t);

/**
 * What the scanner carries through one app: the services parameters are filled from, the
 * capabilities' checks, the Refusals found, and where TypeScript's decorator metadata is missing
 * (one Refusal for the whole app, not one per route).
 */
interface ScanScope {
  readonly services: Services;
  readonly checks: readonly RecordCheck[];
  readonly problems: string[];
  readonly unmarked: string[];
}

/** A handler being scanned: its prototype, method name and function, and how Refusals name it. */
interface HandlerSite {
  readonly proto: object;
  readonly key: string;
  readonly handler: Function;
  readonly label: string;
}

/**
 * The bootstrap scanner: reads every controller's decorator metadata once into frozen route records
 * and collects every problem it finds, so the app is refused with all of them at once.
 */
export function scan(
  controllers: readonly Function[],
  services: Services,
  checks: readonly RecordCheck[],
  problems: string[],
): Scanned {
  const records: RouteRecord[] = [];
  const instances = new Map<Function, object>();
  const scope: ScanScope = { services, checks, problems, unmarked: [] };
  for (const cls of controllers) {
    const prefix = marks.controller(cls);
    if (prefix === undefined) {
      problems.push(
        `${cls.name}: is not a @Controller: decorate the class with @Controller('/prefix')`,
      );
      continue;
    }
    const instance = construct(cls, scope);
    if (instance !== null) instances.set(cls, instance);
    for (const mark of marks.routes(cls.prototype as object)) {
      const record = scanRoute(cls, joinPath(prefix, mark.path), mark, scope);
      if (record !== null) records.push(record);
    }
  }
  if (scope.unmarked.length > 0) problems.push(missingMetadata(scope.unmarked));
  return { records, instances };
}

function missingMetadata(unmarked: readonly string[]): string {
  return `decorator metadata is missing (no design:paramtypes on ${unmarked.slice(0, 3).join(', ')}${unmarked.length > 3 ? ` and ${unmarked.length - 3} more` : ''}): fw reads parameter types from it. Compile with tsc or ts-jest and "experimentalDecorators": true, "emitDecoratorMetadata": true in tsconfig.json; esbuild and tsx do not write it, nor does vitest on Vite 7 or older (esbuild: add unplugin-swc) or swc without its decoratorMetadata option; vitest on Vite 8 (Oxc) writes it from tsconfig.json`;
}

/** One route's frozen record, or null when its method cannot be read (each problem a Refusal). */
function scanRoute(
  cls: Function,
  path: string,
  mark: RouteMark,
  scope: ScanScope,
): RouteRecord | null {
  const { problems } = scope;
  const proto = cls.prototype as object;
  const label = `${mark.method} ${path} (${cls.name}.${mark.key})`;
  const handler = (proto as Record<string, unknown>)[mark.key];
  if (typeof handler !== 'function') {
    problems.push(`${label}: is not a method`);
    return null;
  }
  if (!/^\/[^?#\s]*$/.test(path) || /\{[^}]*\/|\{\}/.test(path))
    problems.push(`${label}: path must start with "/" and name its segments as {name}`);
  if (
    !Reflect.hasMetadata('design:paramtypes', proto, mark.key) &&
    (handler.length > 0 || marks.params(proto, mark.key).length > 0)
  ) {
    scope.unmarked.push(`${cls.name}.${mark.key}`);
    return null;
  }
  const args = readArgs({ proto, key: mark.key, handler, label }, scope);
  const record: RouteRecord = Object.freeze({
    method: mark.method,
    path,
    label,
    controller: cls,
    key: mark.key,
    operationId: mark.operationId ?? `${cls.name}.${mark.key}`,
    summary: mark.summary,
    tag: cls.name.replace(/Controller$/, '') || cls.name,
    args: Object.freeze(args),
    contract: marks.returns(proto, mark.key) ?? null,
    returnType: marks.returnType(proto, mark.key),
    marks: marks.marksOf(proto, mark.key),
    builtIn: false,
  });
  checkRecord(record, handler, scope);
  return record;
}

/** The checks of a whole record: its path, nested reads, contract, and each capability's. */
function checkRecord(record: RouteRecord, handler: Function, scope: ScanScope): void {
  const { label } = record;
  const { problems } = scope;
  checkPathNames(record, problems);
  checkNested(record, problems);
  if (record.contract) checkContract(record.contract, label, problems);
  if (
    record.contract?.kind === 'events' &&
    record.contract.data === null &&
    !record.args.some((a) => a.kind === 'ctx')
  ) {
    problems.push(
      `${label}: @Returns(EventStream) answers through c.events(): take a Ctx parameter`,
    );
  }
  if (record.contract === null) checkUndeclared(record, handler, problems);
  for (const check of scope.checks) check(record, scope.services, problems);
}

/**
 * Builds a controller once, its constructor parameters filled by type, or null when one
 * is not provided (each such parameter is a Refusal) or its types cannot be read.
 */
function construct(cls: Function, scope: ScanScope): object | null {
  const { services, problems } = scope;
  const types = marks.ctorTypes(cls);
  if (types.length < cls.length && !Reflect.hasMetadata('design:paramtypes', cls)) {
    scope.unmarked.push(`${cls.name}'s constructor`);
    return null;
  }
  const args: unknown[] = [];
  const keys = marks.ctorKeys(cls);
  types.forEach((t, i) => {
    const where = `${cls.name}: constructor parameter ${i}`;
    const got = providedFor(keys.has(i) ? keys.get(i) : t, where, services, problems);
    if (got.found) args.push(got.instance);
    else if (got.several) return;
    else if (keys.has(i)) problems.push(notProvidedAs(where, keys.get(i)));
    else if (erased(t))
      problems.push(
        `${cls.name}: constructor parameter ${i} has no type at run time (TypeScript wrote ${typeName(t)}): ${ERASED_FIX}`,
      );
    else
      problems.push(
        `${cls.name}: constructor parameter ${i} (${typeName(t)}) is not provided: pass an instance to app.provide(), or take it out of the constructor`,
      );
  });
  if (args.length !== types.length) return null;
  return new (cls as new (...a: unknown[]) => object)(...args);
}

/** A parameter type TypeScript could not name at run time: an interface, a union, `import type`. */
const erased = (t: unknown): boolean => t === Object || t === Function || t === undefined;
const ERASED_FIX =
  "a type imported with `import type` (or an interface or a union) leaves nothing to look up: import the class itself (`import { Ctx } from 'fw-http'`, not `import type`), or decorate the parameter (@Body, @Query, @Param, @Header, @Authorization)";

/**
 * A read class TypeScript erased: full tsc writes `Function` for a class imported with
 * `import type`, SWC and isolated modules `Object`. Read into either, the body would be `{}`
 * with nothing validated, so it is refused under every compiler.
 */
const erasedRead = (where: string, decorator: string, t: unknown): string =>
  `${where}: ${decorator} has no class at run time (TypeScript wrote ${typeName(t)}), so nothing would be read or validated: the class was imported with \`import type\` (or is an interface): import the class itself (\`import { Transfer } from './transfer'\`, not \`import type\`)`;

/**
 * A route without `@Returns` answers 204 and its document says so: a handler TypeScript says
 * returns a value must declare what. An `async` handler may resolve to anything (its
 * `design:returntype` is `Promise` whatever it holds, and an inferred return type leaves none), so
 * it declares either what it answers or that it answers nothing (`@Returns(NoContent)`), unless it
 * answers through the Ctx. `void` and `undefined` pass; the value of a sync handler
 * whose return type is inferred is still a 500 at run time.
 */
function checkUndeclared(record: RouteRecord, handler: Function, problems: string[]): void {
  const t = record.returnType;
  if (t === Promise || isAsync(handler)) {
    if (record.args.some((a) => a.kind === 'ctx')) return;
    problems.push(
      `${record.label}: is async but declares no @Returns, so what it resolves to has no answer: declare @Returns(...) for its value, or @Returns(NoContent) if it answers nothing (204)`,
    );
    return;
  }
  if (t === undefined) return;
  problems.push(
    `${record.label}: returns ${typeName(t)} but declares no @Returns, so it would answer 204: declare @Returns(...) or return nothing`,
  );
}

/** An `async` function or method, as the engine sees it (tsc and SWC targets from ES2017 keep `async`). */
const isAsync = (f: Function): boolean => f.constructor?.name === 'AsyncFunction';

/** `@Body(schema)`: a Standard Schema reads the body; anything else is refused. */
function schemaBody(schema: unknown, where: string, problems: string[]): ArgRecord {
  if (!isStandardSchema(schema))
    problems.push(
      `${where}: @Body(schema) was given something that is not a Standard Schema v1 value (zod 4, valibot, arktype)`,
    );
  return { kind: 'body', type: Object, schema: schema as StandardSchema };
}

/** `@Query(schema)`: a Standard Schema reads the whole query; anything else is refused. */
function schemaQuery(schema: unknown, where: string, problems: string[]): ArgRecord {
  if (!isStandardSchema(schema))
    problems.push(
      `${where}: @Query(schema) was given something that is not a Standard Schema v1 value (zod 4, valibot, arktype) nor a parameter name`,
    );
  return { kind: 'querySchema', schema: schema as StandardSchema };
}

/** A handler's arguments, one record per parameter: read as its decorator says, else by its type. */
function readArgs(site: HandlerSite, scope: ScanScope): ArgRecord[] {
  const { proto, key } = site;
  const types = marks.paramTypes(proto, key);
  const byIndex = new Map<number, ParamMark>(marks.params(proto, key).map((m) => [m.index, m]));
  const args: ArgRecord[] = [];
  const count = Math.max(
    types.length,
    site.handler.length,
    ...[...byIndex.keys()].map((i) => i + 1),
  );
  for (let i = 0; i < count; i++) {
    const type = types[i];
    const mark = byIndex.get(i);
    const where = `${site.label}: parameter ${i}`;
    if (mark === undefined) args.push(readByType(type, where, scope));
    else if (mark.kind === 'inject') args.push(readInjected(mark.key, where, scope));
    else {
      const arg = readMarked(mark, type, where, scope.problems);
      if (arg !== null) args.push(arg);
    }
  }
  return args;
}

/** `@Inject(key)`: the one instance provided under `key`. */
function readInjected(key: unknown, where: string, scope: ScanScope): ArgRecord {
  const got = providedFor(key, where, scope.services, scope.problems);
  if (got.found)
    return {
      kind: 'service',
      type: typeof key === 'function' ? key : Object,
      instance: got.instance,
    };
  if (!got.several) scope.problems.push(notProvidedAs(where, key));
  return { kind: 'service', type: Object, instance: undefined };
}

const notProvidedAs = (where: string, key: unknown): string =>
  typeof key !== 'object' && typeof key !== 'function'
    ? `${where}: @Inject(${String(key)}) names no key: pass the object the instance is provided as (a class, a Target or Space declaration, a value of your own)`
    : `${where}: @Inject(${keyName(key)}): nothing is provided as it: app.provide(instance, { as: ${keyName(key)} })`;

/** A decorated parameter's record, or null for one refused without a record (`@Session`). */
function readMarked(
  mark: Exclude<ParamMark, { kind: 'inject' }>,
  type: unknown,
  where: string,
  problems: string[],
): ArgRecord | null {
  switch (mark.kind) {
    case 'body':
      return mark.schema !== undefined
        ? schemaBody(mark.schema, where, problems)
        : readBody(type, where, problems);
    case 'form':
      return readForm(mark, type, where, problems);
    case 'query':
      if (mark.schema !== undefined) return schemaQuery(mark.schema, where, problems);
      if (mark.name !== undefined) return { kind: 'query', name: mark.name, type };
      if (erased(type)) problems.push(erasedRead(where, '@Query()', type));
      else if (!isClass(type))
        problems.push(
          `${where}: @Query() needs a class type, or name one value with @Query('name')`,
        );
      return { kind: 'queryClass', type: type as Function };
    case 'param':
      return { kind: 'param', name: mark.name, type };
    case 'header':
      return { kind: 'header', name: mark.name, type };
    case 'authorization':
      return { kind: 'authorization', scheme: mark.scheme };
    case 'session':
      problems.push(
        `${where}: ask for the session by type (session: Session) after app.sessions({ sessionSecret })`,
      );
      return null;
  }
}

/** `@Body()`: the body read into the parameter's class. */
function readBody(type: unknown, where: string, problems: string[]): ArgRecord {
  if (erased(type)) problems.push(erasedRead(where, '@Body()', type));
  else if (type === Array)
    problems.push(
      `${where}: @Body() cannot read an array: wrap it in a class (class NewBookings { @ValidateNested({ each: true }) @Type(() => NewBooking) items!: NewBooking[] }) and take @Body() b: NewBookings`,
    );
  else if (!isClass(type))
    problems.push(
      `${where}: @Body() needs a class to read the body into (got ${typeName(type)}): declare the parameter as a class with class-validator decorators`,
    );
  return { kind: 'body', type: type as Function };
}

/** `@Form()`: an urlencoded or multipart form read into a class (named by `@Form(C)` for a Bound). */
function readForm(
  mark: Extract<ParamMark, { kind: 'form' }>,
  type: unknown,
  where: string,
  problems: string[],
): ArgRecord {
  const formType = mark.bound ?? type;
  if (erased(formType)) problems.push(erasedRead(where, '@Form()', formType));
  else if (!isClass(formType) || formType === Bound)
    problems.push(
      `${where}: @Form needs a class type (for Bound, name it: @Form(SignupForm) b: Bound<SignupForm>)`,
    );
  return {
    kind: 'form',
    type: formType as Function,
    bound: mark.bound !== undefined,
    files: isClass(formType) ? declaredFiles(formType as Function) : [],
    limits: mark.limits ?? null,
  };
}

/** An undecorated parameter: the Ctx, a provided service, or a class with `static resolve(c)`. */
function readByType(type: unknown, where: string, scope: ScanScope): ArgRecord {
  const { services, problems } = scope;
  if (type === Ctx) return { kind: 'ctx' };
  const got = providedFor(type, where, services, problems);
  if (got.found) return { kind: 'service', type: type as Function, instance: got.instance };
  if (got.several) return { kind: 'service', type: Object, instance: undefined };
  if (typeof type === 'function' && typeof (type as { resolve?: unknown }).resolve === 'function')
    return { kind: 'resolved', type };
  if (erased(type))
    problems.push(
      `${where} has no type at run time (TypeScript wrote ${typeName(type)}): ${ERASED_FIX}`,
    );
  else
    problems.push(
      `${where} (${typeName(type)}) is not provided: pass an instance to app.provide(), give it a static resolve(c), or decorate it (@Body, @Query, @Param, @Header, @Authorization)`,
    );
  return { kind: 'service', type: Object, instance: undefined };
}

/**
 * A read class whose `@ValidateNested` property names no class would check only "is an object", so
 * it is refused.
 */
function checkNested(record: RouteRecord, problems: string[]): void {
  for (const a of record.args) {
    if ((a.kind !== 'body' && a.kind !== 'form' && a.kind !== 'queryClass') || !isClass(a.type))
      continue;
    for (const where of unseenNested(a.type))
      problems.push(
        `${record.label}: @ValidateNested on ${where} cannot see the class it holds, so it would only check "is an object": add @Type(() => TheClass) from class-transformer`,
      );
  }
}

function checkPathNames(record: RouteRecord, problems: string[]): void {
  const names = templateNames(record.path);
  const params = record.args.flatMap((a) => (a.kind === 'param' ? [a.name] : []));
  for (const n of names)
    if (!params.includes(n))
      problems.push(`${record.label}: path segment {${n}} has no @Param('${n}') parameter`);
  for (const p of params)
    if (!names.includes(p))
      problems.push(
        `${record.label}: @Param('${p}') names no {${p}} segment of the path${colonHint(record.path, p)}`,
      );
  if (new Set(names).size !== names.length)
    problems.push(`${record.label}: a path segment name is used twice`);
}

/**
 * The fix when the path names the parameter as Express and Nest do (`/orders/:id`): fw writes
 * path parameters as `{id}`, and `:id` would be matched as those three characters.
 */
function colonHint(path: string, name: string): string {
  if (!path.split('/').includes(`:${name}`)) return '';
  const fixed = path.replace(/(^|\/):([^/]+)/g, '$1{$2}');
  return `: fw writes path parameters as {${name}}, not :${name} (the route's path is then ${fixed})`;
}

/** What a nested contract sits inside, for the checks that care (EventStream); null past a contract of a capability's own kind. */
type Under = 'status' | 'reply' | 'optional' | null;
const UNDER: Partial<Record<Contract['kind'], Under>> = {
  status: 'status',
  reply: 'reply',
  optional: 'optional',
};

/**
 * The contract checks of the core answer vocabulary (each a Refusal naming the route); capabilities
 * add their own through RecordCheck.
 */
function checkContract(
  contract: Contract,
  label: string,
  problems: string[],
  under: Under = null,
): void {
  switch (contract.kind) {
    case 'redirect':
      if (!REDIRECT_STATUSES.includes(contract.status))
        problems.push(
          `${label}: redirect status ${contract.status} is not one of 301, 302, 303, 307, 308`,
        );
      break;
    case 'status':
      checkStatus(
        contract.status,
        contract.inner,
        `${label}: Status(${contract.status}, …)`,
        problems,
      );
      break;
    case 'reply':
      for (const status of contract.statuses)
        checkStatus(
          status,
          contract.variants?.[status] ?? contract.inner,
          `${label}: Reply status ${status}`,
          problems,
        );
      break;
    case 'events':
      checkEvents(contract, label, problems, under);
      break;
    case 'self':
      checkSelfWriting(contract.type, label, problems);
      break;
    default:
      break;
  }
  const here = UNDER[contract.kind] ?? null;
  for (const inner of innerContracts(contract)) checkContract(inner, label, problems, here);
}

/** An event stream answers 200 with its head at once: it stands alone, under no wrapper. */
function checkEvents(
  contract: Extract<Contract, { kind: 'events' }>,
  label: string,
  problems: string[],
  under: Under,
): void {
  if (under !== null)
    problems.push(
      `${label}: EventStream stands alone: c.events() always answers 200 (not inside ${under === 'status' ? 'Status' : under === 'reply' ? 'Reply' : 'Optional'})`,
    );
  checkEventData(contract, label, problems);
}

/** `EventStream.of(T, { event })`: data a class or a Standard Schema, an event type on one line. */
function checkEventData(
  contract: Extract<Contract, { kind: 'events' }>,
  label: string,
  problems: string[],
): void {
  const data = contract.data;
  if (data !== null && data.kind !== 'json' && data.kind !== 'schema')
    problems.push(
      `${label}: EventStream.of takes a class or a Standard Schema for each event's data (JSON), not a ${data.kind === 'own' ? data.name : data.kind} contract`,
    );
  const event = contract.event;
  if (event !== null && (event === '' || /[\r\n\0]/.test(event)))
    problems.push(
      `${label}: EventStream.of({ event: ${JSON.stringify(event)} }): an event type is a non-empty line`,
    );
}

/** A class that writes itself: a static `contentType`, a `write(out)`, and at most a scalar `openapi`. */
function checkSelfWriting(type: Shape, label: string, problems: string[]): void {
  const t = type as unknown as {
    contentType?: unknown;
    prototype: { write?: unknown };
  };
  if (typeof t.contentType !== 'string')
    problems.push(`${label}: ${typeName(type)} has write() but no static contentType`);
  if (typeof t.prototype.write !== 'function')
    problems.push(`${label}: ${typeName(type)} has a static contentType but no write(out)`);
  const marker = (t as { openapi?: unknown }).openapi;
  if (marker !== undefined && !isScalarMarker(marker))
    problems.push(
      `${label}: ${typeName(type)}.openapi may only name a scalar type ({ type: 'string' | 'number' | 'integer' | 'boolean' })`,
    );
}

/**
 * The statuses a `Status` or `Reply` may declare (`at`: the route and the wrapper): a real status (100–599) that carries
 * what the contract says. 1xx, 204 and 304 have no body; a 3xx means nothing without the Location
 * only `Redirect` writes.
 */
function checkStatus(status: number, inner: Contract, at: string, problems: string[]): void {
  if (!Number.isInteger(status) || status < 100 || status > 599)
    problems.push(`${at}: ${status} is not an HTTP status: use a whole number from 100 to 599`);
  else if (status < 200)
    problems.push(
      `${at}: a 1xx status is an interim answer, never a handler's: use a status from 200 to 599`,
    );
  else if ((status === 204 || status === 304) && inner.kind !== 'void')
    problems.push(
      `${at}: a ${status} answer has no body: leave @Returns out and return nothing${status === 304 ? " (304 is Versioned's to send)" : ''}`,
    );
  else if (status >= 300 && status < 400 && status !== 304)
    problems.push(
      `${at}: a ${status} answer needs a Location: declare @Returns(Redirect(${REDIRECT_STATUSES.includes(status) ? status : 303})) and return Redirect.to(url)`,
    );
}

function isScalarMarker(m: unknown): boolean {
  if (typeof m !== 'object' || m === null) return false;
  const { type, ...rest } = m as { type?: unknown };
  return (
    ['string', 'number', 'integer', 'boolean'].includes(type as string) &&
    Object.keys(rest).every((k) => ['format', 'description', 'pattern', 'example'].includes(k))
  );
}

function isClass(t: unknown): t is Function {
  return (
    typeof t === 'function' &&
    t !== Object &&
    t !== String &&
    t !== Number &&
    t !== Boolean &&
    t !== Array &&
    t !== Promise
  );
}

export function joinPath(prefix: string, path: string): string {
  const joined = ('/' + prefix + '/' + path).replace(/\/+/g, '/');
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}
