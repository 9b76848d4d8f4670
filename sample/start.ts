import { types } from 'node:util';
import { shop } from './shop/shop';
import { warehouse } from './warehouse/warehouse';

/** What `npm start` reads from the environment. */
export interface StartEnv {
  readonly HOST?: string | undefined;
  readonly PORT?: string | undefined;
  readonly WAREHOUSE_URL?: string | undefined;
  readonly WAREHOUSE_PORT?: string | undefined;
  readonly WAREHOUSE_DELAY_MS?: string | undefined;
  readonly REDIS_URL?: string | undefined;
  /** Orders in Postgres, POST /orders atomic (e.g. postgres://shop@127.0.0.1:5432/shop). */
  readonly DATABASE_URL?: string | undefined;
}

/** The running sample: its URL, and `stop()` to drain and close both apps. */
export interface Started {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts the warehouse (unless WAREHOUSE_URL names one) and the shop on HOST:PORT
 * (127.0.0.1:3000), their lines to `log` (default stdout). On a failure, what had started is closed before the error is passed on.
 */
export async function start(env: StartEnv, log?: (line: string) => void): Promise<Started> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0)) await s();
  };
  try {
    let warehouseUrl = env.WAREHOUSE_URL;
    if (!warehouseUrl) {
      const delayMs = Number(env.WAREHOUSE_DELAY_MS ?? 0);
      const w = warehouse(log ? { delayMs, log } : { delayMs });
      stops.push(() => w.close());
      warehouseUrl = (await w.listen({ host: '127.0.0.1', port: Number(env.WAREHOUSE_PORT ?? 0) }))
        .url;
    }
    // Loaded only with DATABASE_URL: without it the sample never loads pg.
    const database = env.DATABASE_URL
      ? await (await import('./shop/database')).openDatabase(env.DATABASE_URL)
      : undefined;
    // Closed by the shop when it closes; until the shop exists, here on a failure.
    if (database !== undefined) stops.push(() => database.close());
    const app = shop({ redisUrl: env.REDIS_URL, warehouseUrl, log, database });
    if (database !== undefined) stops.pop();
    stops.unshift(() => app.close());
    const { url } = await app.listen({
      host: env.HOST ?? '127.0.0.1',
      port: Number(env.PORT ?? 3000),
    });
    return { url, stop };
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

/**
 * The line a startup failure prints on stderr: the whole message (a RefusalError lists every
 * problem; a port in use names the address), never a stack of fw's own frames.
 */
export const startFailure = (e: unknown): string =>
  `fw sample did not start: ${types.isNativeError(e) ? e.message : String(e)}`;
