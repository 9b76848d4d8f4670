import 'reflect-metadata';
import { fail } from '../core/fail';
import type { Ctx } from '../request/ctx';
import type { Capability, OperationSink } from '../route/extensions';
import { MarkKey } from '../route/mark-key';
import { markRoute } from '../route/decorators';
import type { RouteRecord } from '../route/route-record';
import type { CompiledRoute } from '../pipeline/compile-route';
import type { VersionsOptions } from '../route/versions-options';
import { noteOutcome } from './outcome-notes';

export type { VersionsOptions } from '../route/versions-options';

/** `@Deprecated(options)`: RFC 9745 `Deprecation`, RFC 8594 `Sunset`, and a `Link` to read more. */
export interface DeprecatedOptions {
  /** When the route was (or will be) deprecated. Default the Unix epoch: "deprecated", no date given. */
  readonly since?: Date;
  /** When it stops answering (RFC 8594). */
  readonly sunset?: Date;
  /** A page about the deprecation: sent as `Link: <link>; rel="deprecation"`. */
  readonly link?: string;
}

/** The key of a route's `@ApiVersion` mark: the versions it serves. */
export const VERSION = new MarkKey<readonly string[]>('version');
/** The key of a route's `@Deprecated` mark. */
export const DEPRECATED = new MarkKey<DeprecatedOptions>('deprecated');

// Controller-level marks live on the class, under keys of this module alone.
const CLASS_VERSION = Symbol('fw.version');
const CLASS_DEPRECATED = Symbol('fw.deprecated');

const VERSION_TEXT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

/**
 * The API versions a route (or every route of a controller) belongs to. A route without one is
 * version-neutral: served at its plain path, and under the header strategy to every version that
 * has no route of its own there.
 * @example @Controller('/orders') @ApiVersion('2') class OrdersV2 { … }
 */
export function ApiVersion(...versions: string[]): ClassDecorator & MethodDecorator {
  return ((target: object, key?: string | symbol) => {
    if (key === undefined) Reflect.defineMetadata(CLASS_VERSION, versions, target);
    else markRoute(VERSION, versions)(target, key, {});
  }) as ClassDecorator & MethodDecorator;
}

/**
 * Marks a route (or every route of a controller) deprecated: its answers carry `Deprecation`,
 * `Sunset` and `Link` (replays of kept answers included), its operation says `deprecated: true`, and
 * `fw.deprecated.requests` counts its use.
 * @example @Deprecated({ sunset: new Date('2027-06-30'), link: 'https://docs.example.com/v2' })
 */
export function Deprecated(options: DeprecatedOptions = {}): ClassDecorator & MethodDecorator {
  return ((target: object, key?: string | symbol) => {
    if (key === undefined) Reflect.defineMetadata(CLASS_DEPRECATED, options, target);
    else markRoute(DEPRECATED, options)(target, key, {});
  }) as ClassDecorator & MethodDecorator;
}

/** The version a record serves (one per record once the app has versioned them), or null. */
const versionOfRecord = new WeakMap<RouteRecord, string>();

/** The version a built route serves, or null for a version-neutral one. */
export function versionOf(record: RouteRecord): string | null {
  return versionOfRecord.get(record) ?? null;
}

function declaredVersions(record: RouteRecord): readonly string[] | null {
  return (
    record.marks.get(VERSION) ??
    (Reflect.getOwnMetadata(CLASS_VERSION, record.controller) as string[] | undefined) ??
    null
  );
}

function deprecationOf(record: RouteRecord): DeprecatedOptions | null {
  return (
    record.marks.get(DEPRECATED) ??
    (Reflect.getOwnMetadata(CLASS_DEPRECATED, record.controller) as
      DeprecatedOptions | undefined) ??
    null
  );
}

/**
 * One record per version a route serves, its path under `/v{version}` with the URI strategy; each
 * problem (a `@ApiVersion` without the app's `versions`, a malformed version) is a Refusal line.
 * Runs at build, before routes are compiled: the request path never reads a mark.
 */
export function versionRecords(
  records: readonly RouteRecord[],
  options: VersionsOptions | undefined,
  problems: string[],
): RouteRecord[] {
  return records.flatMap((record) => {
    const versions = declaredVersions(record);
    if (versions === null) return [record];
    const bad = versions.length === 0 ? '(none)' : versions.find((v) => !VERSION_TEXT.test(v));
    if (bad !== undefined) {
      problems.push(
        `${record.label}: @ApiVersion(${bad}) is not a version: 1 to 32 letters, digits, ".", "_" or "-"`,
      );
      return [];
    }
    if (options === undefined) {
      problems.push(
        `${record.label}: @ApiVersion needs the app to tell versions apart: new App({ versions: { by: 'uri' | 'header' } })`,
      );
      return [];
    }
    return versions.map((v) => versioned(record, v, options));
  });
}

function versioned(record: RouteRecord, version: string, options: VersionsOptions): RouteRecord {
  const path =
    options.by === 'uri' ? `/v${version}${record.path === '/' ? '' : record.path}` : record.path;
  const label = record.label.replace(
    `${record.method} ${record.path} `,
    `${record.method} ${path} `,
  );
  const out: RouteRecord = Object.freeze({
    ...record,
    path,
    label: options.by === 'header' ? `${label} v${version}` : label,
    operationId: record.operationId + (options.by === 'header' ? `.v${version}` : ''),
  });
  versionOfRecord.set(out, version);
  return out;
}

/** What the router keys a route by: with the header strategy, two versions of a path are two routes. */
export function routeKey(record: RouteRecord, options: VersionsOptions | undefined): string {
  const key = `${record.method} ${record.path.replace(/\{[^}]*\}/g, '{}')}`;
  return options?.by === 'header' ? `${key} @${versionOf(record) ?? '*'}` : key;
}

/** A compiled route as the router holds it. */
export type Served = CompiledRoute;

/**
 * Under the header strategy, the routes of one method and path become one that picks by the
 * request's version header (the default version without it; a version-neutral route for any
 * version without a route of its own; 404 otherwise). Every answer says `Vary` on the header.
 */
export function dispatchByVersion(
  routes: readonly Served[],
  options: VersionsOptions | undefined,
  defaultVersion: string | null,
): Served {
  if (options?.by !== 'header' || (routes.length === 1 && versionOf(routes[0]!.record) === null))
    return routes[0]!;
  const header = (options.header ?? 'Accept-Version').toLowerCase();
  const byVersion = new Map(routes.map((r) => [versionOf(r.record), r] as const));
  const neutral = byVersion.get(null) ?? null;
  const first = (defaultVersion !== null ? byVersion.get(defaultVersion) : undefined) ?? routes[0]!;
  return {
    record: first.record,
    info: first.info,
    run: (c) => {
      c.setHeader('vary', options.header ?? 'Accept-Version');
      const asked = c.header(header) ?? defaultVersion;
      const route = (asked === null ? undefined : byVersion.get(asked)) ?? neutral;
      if (route === null)
        throw fail.notFound(
          'version %s of %s %s does not exist',
          asked ?? '(none)',
          c.method,
          first.record.path,
        );
      return route.run(c);
    },
  };
}

/** The version a request without the header gets: the setting, else the highest declared. */
export function defaultVersionOf(
  records: readonly RouteRecord[],
  options: VersionsOptions | undefined,
): string | null {
  if (options?.by !== 'header') return null;
  if (options.default !== undefined) return options.default;
  const all = [...new Set(records.map(versionOf).filter((v): v is string => v !== null))];
  return all.sort(byVersionText).at(-1) ?? null;
}

/** Every version the app's routes declare, lowest first ("2" before "10"). */
export function versionsIn(records: readonly RouteRecord[]): string[] {
  return [...new Set(records.map(versionOf).filter((v): v is string => v !== null))].sort(
    byVersionText,
  );
}

const byVersionText = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** The headers a deprecated route sends, made once. */
function deprecationHeaders(d: DeprecatedOptions): [string, string][] {
  const since = Math.floor((d.since?.getTime() ?? 0) / 1000);
  const lines: [string, string][] = [['deprecation', `@${since}`]];
  if (d.sunset !== undefined) lines.push(['sunset', d.sunset.toUTCString()]);
  if (d.link !== undefined) lines.push(['link', `<${d.link}>; rel="deprecation"`]);
  return lines;
}

const around = (record: RouteRecord) => {
  const d = deprecationOf(record);
  if (d === null) return null;
  const lines = deprecationHeaders(d);
  return (c: Ctx, proceed: () => unknown) => {
    for (const [name, value] of lines) c.setHeader(name, value);
    noteOutcome(c, 'deprecated', 'used');
    return proceed();
  };
};

function describe(record: RouteRecord, op: OperationSink): void {
  const version = versionOf(record);
  if (version !== null) op.extension('x-fw-version', version);
  const d = deprecationOf(record);
  if (d === null) return;
  op.deprecated();
  for (const status of op.answerStatuses) {
    op.header(status, 'Deprecation', {
      description: 'RFC 9745: when this operation was deprecated (a structured-field date)',
      required: true,
      schema: { type: 'string' },
      example: deprecationHeaders(d)[0]![1],
    });
    if (d.sunset !== undefined)
      op.header(status, 'Sunset', {
        description: 'RFC 8594: when this operation stops answering',
        required: true,
        schema: { type: 'string' },
        example: d.sunset.toUTCString(),
      });
    if (d.link !== undefined)
      op.header(status, 'Link', {
        description: 'RFC 9745 §3: where to read about the deprecation (rel="deprecation")',
        required: true,
        schema: { type: 'string' },
        example: deprecationHeaders(d).find(([name]) => name === 'link')![1],
      });
  }
}

/** The capability: deprecation headers on every answer (an around outside idempotency) and in the document. */
export const apiVersions: Capability = { arounds: [around], describe };
