import type { WebSocket } from 'ws';

/** What a WebSocket route's loop gets: the open socket (from the `ws` package) and the handler's state. */
export type UpgradeLoop<S> = (ws: WebSocket, state: S) => unknown;
