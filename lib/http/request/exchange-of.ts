import type { IncomingMessage, ServerResponse } from 'node:http';
// The Ctx class fills `faces` as it is defined: loaded here, before any exchange is opened or read.
import './ctx';
import type { Ctx } from './ctx';
import { Exchange, faces, type Core } from './exchange';

// fw's way between a request's public face (the `Ctx`) and its engine state (the `Exchange`). No
// public door exports this module: a program holding a Ctx has no way to its exchange.

/** The engine state behind `c` (the Ctx class's own reader of its `#x`, taken once it is loaded). */
export const exchangeOf: (c: Ctx) => Exchange = faces.exchangeOf;

/** The `Ctx` of exchange `x`: what handlers, middleware and capabilities are given. */
export function ctxOf(x: Exchange): Ctx {
  return x.face as Ctx;
}

/** Opens a request: its exchange, and the Ctx over it. */
export function openCtx(req: IncomingMessage, res: ServerResponse, core: Core): Ctx {
  const x = new Exchange(req, res, core);
  const c = faces.open(x) as Ctx;
  x.face = c;
  return c;
}
