import { App, Controller, Post, RateLimit, Returns } from 'fw-http';

// What the @RateLimit specs share: the limited routes they send to, and serving an app for a test.

/** The `max` of each route `limitedRoutes` makes (per 60 s). */
export interface Limits {
  readonly sliding: number;
  readonly open: number;
  readonly closed: number;
}

/**
 * A controller of POST /sliding (a sliding window), /open (fails open while the store is down, the
 * default) and /closed (storeDown: 'closed'); `ran` is called when /open or /closed runs.
 */
export function limitedRoutes(limits: Limits, ran: () => void) {
  @Controller()
  class Limited {
    @Returns(Object)
    @Post('/sliding')
    @RateLimit({ max: limits.sliding, perSeconds: 60, window: 'sliding' })
    sliding() {
      return { ok: true };
    }

    @Returns(Object)
    @Post('/open')
    @RateLimit({ max: limits.open, perSeconds: 60 })
    open() {
      ran();
      return { ok: true };
    }

    @Returns(Object)
    @Post('/closed')
    @RateLimit({ max: limits.closed, perSeconds: 60, storeDown: 'closed' })
    closed() {
      ran();
      return { ok: true };
    }
  }
  return Limited;
}

/** Runs `use` with `app` listening on a port of its own; closes the app after. */
export async function serve(app: App, use: (port: number) => Promise<void>): Promise<void> {
  const { port } = await app.listen({ port: 0 });
  try {
    await use(port);
  } finally {
    await app.close();
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
