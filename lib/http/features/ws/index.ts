/**
 * `fw-http/ws`: WebSocket routes over the `ws` package, loaded by the first upgrade.
 * `@WebSocketRoute(path, options)` declares one, `c.upgrade(loop, state)` takes the connection over;
 * `WEBSOCKET_DEFAULTS` are the limits a route has unless it says otherwise, and `UPGRADE` is the
 * mark a capability reads. This folder is the door; the feature itself is ../websocket.ts.
 */
export {
  WebSocketRoute,
  UPGRADE,
  WEBSOCKET_DEFAULTS,
  type WebSocketOptions,
  type OriginRule,
  type UpgradeMark,
  type UpgradeLoop,
  type WebSocketLimits,
} from '../websocket';
