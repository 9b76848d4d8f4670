import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AroundFactory, Capability } from './compile-route';
import type { Ctx } from './ctx';
import { HttpError } from './errors';
import { fail } from './fail';
import { defaultFailureBody } from './failure-shape';
import type { OriginRule, UpgradeMark } from './metadata';
import type { OperationBuilder } from './openapi';
import type { RouteRecord } from './route-record';

/** What a WebSocket route's loop gets: the open socket (from the `ws` package) and the handler's state. */
export type UpgradeLoop<S> = (ws: WebSocket, state: S) => unknown;

interface Pending {
  readonly socket: Duplex;
  readonly head: Buffer;
  readonly wss: WebSocketServer;
}

// Upgrade requests that passed the handshake checks, until their handler calls c.upgrade().
const pending = new WeakMap<IncomingMessage, Pending>();

const KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * The WebSocket side of one app: checks handshakes on the server's `upgrade` event and hands the
 * accepted ones to their route's handler, which calls `c.upgrade(loop, state)`.
 */
export class Upgrades {
  readonly #wss = new WebSocketServer({ noServer: true });

  /**
   * Checks a handshake for a WebSocket route: 400 when it is not a valid WebSocket upgrade
   * (EVENTS-05), 403 when its Origin is not one the route named (AUTH-12; a missing Origin too,
   * OPEN-47). Refusals are written on the raw socket, as answers before routing are. True when the
   * request may go on to its handler.
   */
  admit(req: IncomingMessage, socket: Duplex, head: Buffer, mark: UpgradeMark): boolean {
    const key = req.headers['sec-websocket-key'];
    if (req.method !== 'GET' || !/^websocket$/i.test(req.headers.upgrade ?? '') || typeof key !== 'string' || !KEY.test(key) || req.headers['sec-websocket-version'] !== '13') {
      refuse(socket, 400, 'not a valid WebSocket upgrade');
      return false;
    }
    if (!originAllowed(mark.origins, req)) {
      refuse(socket, 403, 'WebSocket origin not allowed');
      return false;
    }
    pending.set(req, { socket, head, wss: this.#wss });
    return true;
  }

  /** Closes every open WebSocket (1001 going away), cutting those that do not answer within a second. */
  closeAll(): void {
    for (const ws of this.#wss.clients) {
      ws.close(1001, 'server shutting down');
      setTimeout(() => ws.terminate(), 1_000).unref();
    }
  }
}

function originAllowed(rule: OriginRule, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (Array.isArray(rule) && rule.length === 0) return true; // no origins named: any (and none)
  if (origin === undefined) return false;
  if (typeof rule === 'function') return rule(origin, { host: req.headers.host ?? null, port: req.socket.localPort ?? 0 });
  return (rule as readonly string[]).includes(origin);
}

function refuse(socket: Duplex, status: number, message: string): void {
  const body = defaultFailureBody(status, message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Completes `c.upgrade()`: 400 when the request is not an admitted WebSocket upgrade. */
export function upgradeConnection<S>(c: Ctx, loop: UpgradeLoop<S>, state: S): void {
  const p = pending.get(c.req);
  if (p === undefined) throw fail.badRequest('not a WebSocket upgrade');
  if (c.status !== 0) throw new HttpError('AlreadySent', `c.upgrade() after ${c.status} was sent`);
  pending.delete(c.req);
  c.status = 101;
  const label = `${c.method} ${c.path}`;
  p.wss.handleUpgrade(c.req, p.socket, p.head, (ws) => {
    // A loop that fails closes the socket with 1011 (internal error) and is logged.
    const failed = (e: unknown) => {
      c.core.log(`warning: ${label} WebSocket loop failed: ${e instanceof Error ? e.message : String(e)}`);
      ws.close(1011, 'internal error');
    };
    try {
      const r = loop(ws, state);
      if (r instanceof Promise) r.catch(failed);
    } catch (e) {
      failed(e);
    }
  });
}

// A WebSocket route reached without an admitted handshake (a plain GET, or app.inject) is 400
// before its handler runs (EVENTS-05).
const around: AroundFactory = (record) => {
  if (record.upgrade === null) return null;
  return (c, proceed) => {
    if (!pending.has(c.req)) throw fail.badRequest('not a WebSocket upgrade');
    return proceed();
  };
};

const describe = (record: RouteRecord, op: OperationBuilder): void => {
  if (record.upgrade === null) return;
  op.answer(101, { description: 'Switching Protocols: the connection becomes a WebSocket' });
  op.failure(400, 'not a valid WebSocket upgrade');
  op.failure(403, 'the Origin is not one the route names');
};

export const websockets: Capability = { arounds: [around], describe };
