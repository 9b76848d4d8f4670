import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { HeaderLines } from '../core/error-mapping';
import type { CompiledRoute } from '../pipeline/compile-route';
import type { Ctx } from '../request/ctx';
import type { SendFileOptions } from '../request/send-file-options';
import type { UpgradeLoop } from '../request/upgrade-loop';
import type { Capability, Middleware } from '../route/extensions';
import type { MarkKey } from '../route/mark-key';
import type { RouteRecord } from '../route/route-record';
import type { VersionsOptions } from '../route/versions-options';

// What the app needs of fw's own features, as shapes only. The app is handed one `BuiltIns` (the
// list in defaults.ts) and names no feature: the features sit below it and are wired in above it.
// Most of it is capabilities, added like a program's; the rest are the few places where a
// feature works on the socket or the router rather than on a route (WebSocket upgrades, version
// dispatch, telemetry), kept as plain functions so the request path pays no indirection it did
// not pay before.

/** The per-request timings of a socket taken from the `upgrade` event. */
export interface UpgradeTimes {
  readonly bodyMs: number;
  readonly lingerMs: number;
  readonly idleMs: number;
  readonly early: HeaderLines;
}

/** What a socket taken from the `upgrade` event is served on: its timings, and its route's mark. */
export interface UpgradeTerms extends UpgradeTimes {
  /** The `@WebSocketRoute` mark of the route the request reaches, or null: served as plain HTTP. */
  readonly mark: unknown;
}

/** The sockets taken from the server's `upgrade` event: WebSocket handshakes, or requests served as plain HTTP. */
export interface UpgradeSockets {
  take(
    req: IncomingMessage,
    socket: Socket,
    head: Buffer,
    terms: UpgradeTerms,
  ): { readonly req: IncomingMessage; readonly res: ServerResponse } | null;
  closeAll(signal: AbortSignal): Promise<void>;
}

/** Spans and metrics of the app's requests, when an OpenTelemetry SDK is registered. */
export interface AppTelemetry {
  /** The request's trace context, or null when it is not traced. */
  begin(c: Ctx): object | null;
  shed(req: IncomingMessage): void;
}

/** How the router sees `@ApiVersion` routes (`new App({ versions })`). */
export interface VersionRouting {
  records(
    records: readonly RouteRecord[],
    options: VersionsOptions | undefined,
    problems: string[],
  ): RouteRecord[];
  key(record: RouteRecord, options: VersionsOptions | undefined): string;
  defaultOf(records: readonly RouteRecord[], options: VersionsOptions | undefined): string | null;
  dispatch(
    routes: readonly CompiledRoute[],
    options: VersionsOptions | undefined,
    defaultVersion: string | null,
  ): CompiledRoute;
}

/** Everything of fw's own that an app is built with. */
export interface BuiltIns {
  /** Capabilities every app has, in the order their steps wrap a handler (the outermost first). */
  readonly capabilities: readonly Capability[];
  /** Services an option provides under a key (`rateStore`). */
  services(options: { readonly rateStore?: unknown }): readonly (readonly [unknown, unknown])[];
  /** The headers a middleware asks for on answers written before routing (`securityHeaders()`), or undefined. */
  earlyHeaders(middleware: Middleware): HeaderLines | undefined;
  /** Sends a file as `c.sendFile` promises. */
  sendFile(c: Ctx, options: SendFileOptions): Promise<void>;
  /** Completes `c.upgrade`: hands the admitted socket to the loop. */
  upgrade<S>(c: Ctx, loop: UpgradeLoop<S>, state: S): void;
  /** The mark of a `@WebSocketRoute` route, and the sockets taken from `upgrade` events. */
  readonly upgradeMark: MarkKey<unknown>;
  upgrades(): UpgradeSockets;
  readonly versions: VersionRouting;
  /** The app's telemetry, or null while no OpenTelemetry provider is registered. */
  telemetry(provided: readonly unknown[]): AppTelemetry | null;
  /** Runs `fn(c)` inside the request's trace context. */
  traced<T>(context: object, fn: (c: Ctx) => T, c: Ctx): T;
}
