import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocketServer, WebSocket as Peer } from 'ws';
import type { AroundFactory, Capability } from '../route/extensions';
import type { Ctx } from '../request/ctx';
import { DetachedRequest, type DetachedTimes } from './detached-request';
import type { HeaderLines } from '../core/error-mapping';
import { HttpError } from '../core/errors';
import { checkWhole } from '../../options';
import { fail } from '../core/fail';
import { MarkKey } from '../route/mark-key';
import { Get, markRoute, type RouteOptions } from '../route/decorators';
import type { OperationSink } from '../route/extensions';
import type { RouteRecord } from '../route/route-record';
import type { RecordCheck } from '../route/extensions';

import type { UpgradeLoop } from '../request/upgrade-loop';
import { exchangeOf } from '../request/exchange-of';

export type { UpgradeLoop } from '../request/upgrade-loop';

/** The limits every WebSocket lives under; a `@WebSocketRoute` route may set each. */
export interface WebSocketLimits {
  /** The largest message a peer may send, fragments put together; past it: close 1009. */
  readonly maxMessageBytes: number;
  /** A ping goes out this often; a peer that has not answered one when the next is due is cut. 0: no pings. */
  readonly pingIntervalMs: number;
  /** No message either way for this long: close 1001 `idle timeout`. 0: never. */
  readonly idleTimeoutMs: number;
  /** Bytes sent but not yet taken by the peer past which the socket is closed with 1008 `peer not reading`. */
  readonly maxBufferedBytes: number;
}

export const WEBSOCKET_DEFAULTS: WebSocketLimits = Object.freeze({
  maxMessageBytes: 1024 * 1024,
  pingIntervalMs: 30_000,
  idleTimeoutMs: 5 * 60_000,
  maxBufferedBytes: 4 * 1024 * 1024,
});

/**
 * The origins a WebSocket route accepts: a list of exact `Origin` values, a function deciding (it
 * also gets the request's `Host` and the local port, for services that learn their port at
 * listen), or `'*'` for any origin (and none). A route must say which: a browser sends its cookies
 * with a handshake from any page, so accepting every origin is a choice the route makes in words.
 */
export type OriginRule =
  | '*'
  | readonly string[]
  | ((origin: string, at: { readonly host: string | null; readonly port: number }) => boolean);

/** What a `@WebSocketRoute` route declares; limits left out take the framework's defaults (`WEBSOCKET_DEFAULTS`). */
export interface UpgradeMark {
  readonly origins: OriginRule;
  readonly maxMessageBytes?: number | undefined;
  readonly pingIntervalMs?: number | undefined;
  readonly idleTimeoutMs?: number | undefined;
  readonly maxBufferedBytes?: number | undefined;
}

/** The key of a route's `@WebSocketRoute` mark: `record.marks.get(UPGRADE)`. */
export const UPGRADE = new MarkKey<UpgradeMark>('upgrade');

export interface WebSocketOptions extends RouteOptions {
  /**
   * Exact `Origin` values, a function deciding, or `'*'` for any origin (and none). Required: a
   * route that names none (or an empty list) is refused at startup.
   */
  readonly origins?: OriginRule;
  /** The largest message a peer may send, fragments put together; past it the socket closes with 1009. Default 1 MiB. */
  readonly maxMessageBytes?: number;
  /** A ping goes out this often; a peer that has not answered one when the next is due is cut. Default 30 s; 0 sends none. */
  readonly pingIntervalMs?: number;
  /** A socket with no message either way for this long is closed with 1001 `idle timeout`. Default 5 min; 0 never. */
  readonly idleTimeoutMs?: number;
  /**
   * Bytes sent to the peer and not yet taken by it (`ws.bufferedAmount`) past which the socket is
   * closed with 1008 `peer not reading`: later sends are dropped, and a peer that still reads
   * nothing is cut 30 s later (or by the app's `writeTimeoutMs`, if sooner). Default 4 MiB.
   */
  readonly maxBufferedBytes?: number;
}

/**
 * A WebSocket route: a GET whose handler calls `c.upgrade(loop, state)`. A handshake whose `Origin`
 * is not named gets 403 (a missing one too, unless the route says `origins: '*'`); a request that is not a valid
 * WebSocket upgrade gets 400. The framework owns the socket's errors and limits: a peer breaking
 * the protocol is closed (1002, 1007, 1009) and logged, never an uncaught error.
 * @example @WebSocketRoute('/ws/echo', { origins: ['https://shop.example'], maxMessageBytes: 64 * 1024 }) echo(c: Ctx) { c.upgrade(echoLoop, null) }
 */
export function WebSocketRoute(path = '', options: WebSocketOptions = {}): MethodDecorator {
  const {
    origins = [],
    maxMessageBytes,
    pingIntervalMs,
    idleTimeoutMs,
    maxBufferedBytes,
    ...rest
  } = options;
  const get = Get(path, rest);
  const mark = markRoute(UPGRADE, {
    origins,
    maxMessageBytes,
    pingIntervalMs,
    idleTimeoutMs,
    maxBufferedBytes,
  });
  return (proto, key, descriptor) => {
    get(proto, key, descriptor);
    mark(proto, key, descriptor);
  };
}

/** What a socket taken from the `upgrade` event is served on: the detached request's times, and its route's mark. */
export interface UpgradeTerms extends DetachedTimes {
  /** The app always has its early headers (an empty list when none): `UpgradeSockets` asks for them. */
  readonly early: HeaderLines;
  /** The route's `@WebSocketRoute` mark, or null: the request is served as plain HTTP. */
  readonly mark: UpgradeMark | null;
}

interface Route {
  readonly wss: WebSocketServer;
  readonly limits: WebSocketLimits;
}

interface Pending {
  readonly socket: Socket;
  readonly head: Buffer;
  readonly route: Route;
}

interface Refused {
  readonly status: 400 | 403;
  readonly message: string;
}

// Handshakes checked on the `upgrade` event, until their route's step reads them: admitted ones
// wait for their handler's c.upgrade(); refused ones are answered through the pipeline, so that
// app.failures, CORS and the request log see them as they see every routed answer.
const handshakes = new WeakMap<IncomingMessage, Pending | Refused>();

const KEY = /^[+/0-9A-Za-z]{22}==$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The upgrade side of one app. Node hands every request carrying `Connection: Upgrade` to the
 * server's `upgrade` listener with its raw socket, out of the server's connection list: each such
 * socket is tracked here until it closes, so that `close()` can end it. WebSocket routes check the
 * handshake and hand the accepted ones to their handler (`c.upgrade(loop, state)`); every other
 * request is served as ordinary HTTP (`DetachedRequest`).
 */
export class Upgrades {
  readonly #routes = new Map<UpgradeMark, Route>();
  readonly #sockets = new Map<Socket, DetachedRequest | null>();
  readonly #defaults: WebSocketLimits;
  #closing = false;
  #emptied: (() => void) | null = null;

  constructor(defaults: Partial<WebSocketLimits> = {}) {
    this.#defaults = { ...WEBSOCKET_DEFAULTS, ...defaults };
  }

  /**
   * Takes a socket from the `upgrade` event: tracked, its errors owned, then either kept for the
   * WebSocket handshake (`mark` given and the handshake admitted) or served as plain HTTP. Returns
   * the request (a fresh one, whose stream carries the body) and response to dispatch, or null when
   * it was answered here (bad framing).
   */
  take(
    req: IncomingMessage,
    socket: Socket,
    head: Buffer,
    terms: UpgradeTerms,
  ): DetachedRequest | null {
    const mark = terms.mark;
    // Node removed its own 'error' listener with the parser: without one, a reset kills the process.
    socket.on('error', () => socket.destroy());
    this.#sockets.set(socket, null);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      if (this.#sockets.size === 0) this.#emptied?.();
    });
    const verdict = mark === null ? null : this.#admit(req, socket, head, mark);
    const served = DetachedRequest.serve(
      req,
      socket,
      verdict !== null && 'route' in verdict ? null : head,
      terms,
    );
    if (served !== null) {
      if (verdict !== null) handshakes.set(served.req, verdict);
      this.#sockets.set(socket, served);
      if (this.#closing) served.res.once('finish', () => socket.destroy());
    }
    return served;
  }

  /**
   * Checks a handshake for a WebSocket route: 400 when it is not a valid WebSocket upgrade,
   * 403 when its Origin is not one the route named (a missing Origin too: a route that names
   * origins trusts no other). The verdict is kept for the route's step.
   */
  #admit(req: IncomingMessage, socket: Socket, head: Buffer, mark: UpgradeMark): Pending | Refused {
    const h = req.headers;
    const key = h['sec-websocket-key'];
    const protocols = h['sec-websocket-protocol'];
    if (
      req.method !== 'GET' ||
      !/^websocket$/i.test(h.upgrade ?? '') ||
      typeof key !== 'string' ||
      !KEY.test(key) ||
      h['sec-websocket-version'] !== '13' ||
      (protocols !== undefined && !protocols.split(',').every((p) => TOKEN.test(p.trim()))) ||
      h['transfer-encoding'] !== undefined ||
      (h['content-length'] !== undefined && h['content-length'] !== '0')
    ) {
      return { status: 400, message: 'not a valid WebSocket upgrade' };
    }
    if (!originAllowed(mark.origins, req))
      return { status: 403, message: 'WebSocket origin not allowed' };
    return { socket, head, route: this.#route(mark) };
  }

  #route(mark: UpgradeMark): Route {
    let route = this.#routes.get(mark);
    if (route === undefined) {
      const d = this.#defaults;
      const limits: WebSocketLimits = {
        maxMessageBytes: mark.maxMessageBytes ?? d.maxMessageBytes,
        pingIntervalMs: mark.pingIntervalMs ?? d.pingIntervalMs,
        idleTimeoutMs: mark.idleTimeoutMs ?? d.idleTimeoutMs,
        maxBufferedBytes: mark.maxBufferedBytes ?? d.maxBufferedBytes,
      };
      // One server per route: `ws` applies maxPayload per server. No compression (a deflate bomb
      // would grow past any message bound before it is counted).
      const wss = new (loadWs().WebSocketServer)({
        noServer: true,
        maxPayload: limits.maxMessageBytes,
        perMessageDeflate: false,
      });
      // The 101 is written by `ws`, past every middleware: the app's security headers join it here.
      wss.on('headers', (lines: string[], req: IncomingMessage) => {
        for (const [name, value] of earlyLines.get(req) ?? []) lines.push(`${name}: ${value}`);
      });
      route = { wss, limits };
      this.#routes.set(mark, route);
    }
    return route;
  }

  /**
   * Ends every upgraded socket: open WebSockets are closed with 1001 (cut if they do not answer
   * within a second); a plain request on such a socket finishes its answer, then the socket is
   * closed; whatever is left a second after `shutdown` aborts is cut. Resolves when all are closed.
   */
  closeAll(shutdown: AbortSignal): Promise<void> {
    this.#closing = true;
    for (const { wss } of this.#routes.values()) {
      for (const ws of wss.clients) {
        ws.close(1001, 'server shutting down');
        setTimeout(() => ws.terminate(), 1_000).unref();
      }
    }
    for (const [socket, served] of this.#sockets) {
      if (served === null || served.answered) socket.destroy();
      else served.res.once('finish', () => socket.destroy());
    }
    const cut = () =>
      setTimeout(() => [...this.#sockets.keys()].forEach((s) => s.destroy()), 1_000).unref();
    if (shutdown.aborted) cut();
    else shutdown.addEventListener('abort', cut, { once: true });
    return this.#sockets.size === 0
      ? Promise.resolve()
      : new Promise((resolve) => (this.#emptied = resolve));
  }
}

function originAllowed(rule: OriginRule, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (rule === '*') return true; // any, and none
  if (origin === undefined) return false;
  if (typeof rule === 'function')
    return rule(origin, { host: req.headers.host ?? null, port: req.socket.localPort ?? 0 });
  return (rule as readonly string[]).includes(origin);
}

/** Completes `c.upgrade()`: 400 when the request is not an admitted WebSocket upgrade. */
/** The app's early header lines for a handshake under way, read by its server's 'headers' event. */
const earlyLines = new WeakMap<IncomingMessage, HeaderLines>();

export function upgradeConnection<S>(c: Ctx, loop: UpgradeLoop<S>, state: S): void {
  const p = handshakes.get(exchangeOf(c).req);
  if (p === undefined || !('route' in p)) throw fail.badRequest('not a WebSocket upgrade');
  if (c.status !== 0) throw new HttpError('AlreadySent', `c.upgrade() after ${c.status} was sent`);
  handshakes.delete(exchangeOf(c).req);
  exchangeOf(c).markSent(101);
  if (exchangeOf(c).core.earlyHeaders.length > 0)
    earlyLines.set(exchangeOf(c).req, exchangeOf(c).core.earlyHeaders);
  const label = `${c.method} ${c.path}`;
  const log = exchangeOf(c).core.log;
  p.route.wss.handleUpgrade(exchangeOf(c).req, p.socket, p.head, (ws) => {
    const failed = watch(ws, p.route.limits, label, log);
    try {
      const r = loop(ws, state);
      if (r instanceof Promise) r.catch(failed);
    } catch (e) {
      failed(e);
    }
  });
}

/**
 * What the framework keeps on every open WebSocket, whatever the loop does: the socket's errors
 * (`ws` has already closed it with 1002, 1007 or 1009 when it reports one: logged here, never an
 * uncaught 'error' event), listeners that throw, pings with a dead-peer cut, and the idle timeout.
 * Returns what the loop's own failures go to, as its listeners' do.
 */
function watch(
  ws: Peer,
  limits: WebSocketLimits,
  label: string,
  log: (line: string) => void,
): (e: unknown) => void {
  // A loop that fails (throws, rejects, or a listener of its throws) closes the socket with 1011 (internal error) and is logged.
  const failed = (e: unknown) => {
    log(`warning: ${label} WebSocket loop failed: ${e instanceof Error ? e.message : String(e)}`);
    ws.close(1011, 'internal error');
  };
  const peer = (ws as unknown as { _socket?: Socket })._socket?.remoteAddress ?? 'unknown peer';
  ws.on('error', (e: Error & { code?: string }) =>
    log(
      `warning: ${label} WebSocket from ${peer} closed ${closeCodeOf(e)}: ${e.message}${e.code ? ` (${e.code})` : ''}`,
    ),
  );
  // A listener that throws would escape from the socket's 'data' handler and end the process.
  const emit = ws.emit;
  ws.emit = function guarded(this: Peer, event: string | symbol, ...args: unknown[]): boolean {
    try {
      return emit.call(this, event, ...args);
    } catch (e) {
      failed(e);
      return true;
    }
  };
  let alive = true;
  const ping =
    limits.pingIntervalMs > 0
      ? setInterval(() => {
          if (!alive) {
            ws.terminate(); // the peer sees 1006: it answered no ping for a whole interval
            return;
          }
          alive = false;
          ws.ping();
        }, limits.pingIntervalMs).unref()
      : null;
  const idle =
    limits.idleTimeoutMs > 0
      ? setTimeout(() => ws.close(1001, 'idle timeout'), limits.idleTimeoutMs).unref()
      : null;
  ws.on('pong', () => (alive = true));
  ws.on('message', () => {
    alive = true;
    idle?.refresh();
  });
  boundSends(ws, limits.maxBufferedBytes, idle, () =>
    log(
      `warning: ${label} WebSocket from ${peer} closed 1008: peer not reading (over ${limits.maxBufferedBytes} bytes buffered)`,
    ),
  );
  ws.once('close', () => {
    if (ping !== null) clearInterval(ping);
    if (idle !== null) clearTimeout(idle);
  });
  return failed;
}

/**
 * Every send refreshes the idle timer and is checked against `maxBufferedBytes`: a peer that sends
 * and never reads (an echo loop's peer) would otherwise grow the server by every answer. Past the
 * bound the socket is closed with 1008: `ws` sends nothing more after `close()` (later sends are
 * dropped, their callbacks get an error), the close frame waits behind the unread bytes, and a peer
 * that still reads nothing is cut by the write timeout (or `ws`'s own 30 s close timer).
 */
function boundSends(
  ws: Peer,
  maxBufferedBytes: number,
  idle: NodeJS.Timeout | null,
  over: () => void,
): void {
  const send = ws.send;
  ws.send = function sent(this: Peer, ...args: Parameters<Peer['send']>) {
    idle?.refresh();
    send.apply(this, args);
    if (this.readyState === this.OPEN && this.bufferedAmount > maxBufferedBytes) {
      this.close(1008, 'peer not reading');
      over();
    }
  } as Peer['send'];
}

/** The close code `ws` sent for a protocol error (kept on the error under a symbol of its own). */
function closeCodeOf(e: Error): number {
  const key = Object.getOwnPropertySymbols(e).find((s) => s.description === 'status-code');
  const code = key === undefined ? undefined : (e as unknown as Record<symbol, unknown>)[key];
  return typeof code === 'number' ? code : 1002;
}

type WsModule = { readonly WebSocketServer: typeof WebSocketServer };
let wsModule: WsModule | null = null;

/**
 * `ws`, loaded when the first `@WebSocketRoute` route is compiled rather than with `fw-http`: an app
 * without one never loads it, and an app with one has it before its first handshake.
 */
function loadWs(): WsModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred until a @WebSocketRoute route is compiled
  return (wsModule ??= require('ws') as WsModule);
}

// A WebSocket route reached without an admitted handshake is answered before its handler runs:
// the handshake's refusal (400/403), or 400 for a plain GET and every app.inject: not upgrades.
const around: AroundFactory = (record) => {
  if (!record.marks.has(UPGRADE)) return null;
  loadWs(); // at compile, so the first handshake does not wait for it
  return (c, proceed) => {
    const verdict = handshakes.get(exchangeOf(c).req);
    if (verdict === undefined) throw fail.badRequest('not a WebSocket upgrade');
    if ('status' in verdict) {
      handshakes.delete(exchangeOf(c).req);
      throw verdict.status === 403
        ? fail.forbidden(verdict.message)
        : fail.badRequest(verdict.message);
    }
    return proceed();
  };
};

const LIMITS: readonly [keyof WebSocketLimits, number][] = [
  ['maxMessageBytes', 1],
  ['pingIntervalMs', 0],
  ['idleTimeoutMs', 0],
  ['maxBufferedBytes', 1],
];

const check: RecordCheck = (record, _services, problems) => {
  const mark = record.marks.get(UPGRADE);
  if (mark === undefined) return;
  const o = mark.origins;
  if (!(o === '*' || typeof o === 'function' || (Array.isArray(o) && o.length > 0))) {
    problems.push(
      `${record.label}: @WebSocketRoute names no origins: list them (origins: ['https://shop.example']), pass a function, or say origins: '*' to accept a handshake from any page (the browser sends its cookies with it)`,
    );
  }
  const owner = { where: `${record.label}: @WebSocketRoute` };
  for (const [name, least] of LIMITS) {
    const v = mark[name];
    const unit = name.endsWith('Ms') ? 'ms' : 'bytes';
    // Every problem of the route is told at once: the refusal's message is noted, not thrown.
    if (v !== undefined)
      try {
        checkWhole(owner, name, v, { unit, min: least });
      } catch (e) {
        problems.push((e as Error).message);
      }
  }
};

const describe = (record: RouteRecord, op: OperationSink): void => {
  if (!record.marks.has(UPGRADE)) return;
  op.answer(101, { description: 'Switching Protocols: the connection becomes a WebSocket' });
  op.failure(400, 'not a valid WebSocket upgrade');
  op.failure(403, 'the Origin is not one the route names');
};

// A WebSocket route's answers are its 101 and the handshake's refusals, never the return type's guess.
const answersItself = (record: RouteRecord): boolean => record.marks.has(UPGRADE);

export const websockets: Capability = {
  checks: [check],
  arounds: [around],
  describe,
  answersItself,
};
