import { resolve } from 'node:path';
import { App, logger } from 'fw-http';
import { securityHeaders } from 'fw-http/browser';
import { Dir } from 'fw-http/files';
import { FilesController } from './files-controller';
import { MemoryStore, type PgStore, RedisStore, type Store } from 'fw-http/cache';
import { CatalogController } from './catalog-controller';
import { OrderBook } from './order-book';
import { ExportsController, ordersController } from './orders-controller';
import { importController } from './import-controller';
import type { PgOrderBook } from './pg-order-book';
import { QuoteController } from './quote-controller';
import { LiveController } from './live-controller';
import { SessionController } from './session-controller';
import { Imports, Orders } from './spaces';
import { pages } from './paged';
import { Warehouse, WarehouseClient } from './warehouse-client';
import { Client } from 'fw-http/fetch';
import { Metrics } from './metrics';
import { MetricsController } from './metrics-controller';
import { AdminController, DevTokenController, JwksController } from './admin-controller';
import { Account } from './account';

export interface ShopOptions {
  readonly log?: ((line: string) => void) | undefined;
  /** Where idempotency records live: Redis when given (shared by every instance), memory otherwise. */
  readonly redisUrl?: string | undefined;
  /** The warehouse's base URL; the shop reaches it only through its Target. Default WAREHOUSE_URL, else http://127.0.0.1:4001. */
  readonly warehouseUrl?: string;
  /**
   * Where the OpenAPI document is written at startup, relative to the working directory; null for
   * nowhere. Default: OPENAPI_OUT, else openapi/openapi.json, except under tests (NODE_ENV=test),
   * which must not rewrite the committed file that spec/http/openapi/committed.spec.ts checks.
   */
  readonly openapiOut?: string | null;
  /** Where uploads (`POST /orders/import`) are written while a request reads them. Default UPLOAD_DIR, else the system temp directory. */
  readonly uploadDir?: string | undefined;
  /**
   * Orders in Postgres (see `openDatabase`): the book there, the orders space on its PgStore, and
   * POST /orders atomic. Without it, the in-process book and memory (or Redis) store.
   */
  readonly database?: ShopDatabase | undefined;
}

/** The shop's Postgres: its order book and the store its idempotency records live in. */
export interface ShopDatabase {
  readonly book: PgOrderBook;
  readonly store: PgStore;
  close(): Promise<void>;
}

/** The shop service: every capability of fw, used as a program would. */
export function shop(options: ShopOptions = {}): App {
  const client = new Client();
  const warehouse = Warehouse.open(client, {
    base: options.warehouseUrl ?? process.env.WAREHOUSE_URL ?? 'http://127.0.0.1:4001',
    userAgent: 'fw-sample-shop',
  });
  // Registered before the app is built: fw resolves its meter when it builds.
  const metrics = Metrics.shared();
  const redis = options.redisUrl ? new RedisStore({ url: options.redisUrl }) : null;
  const db = options.database ?? null;
  const store: Store = db?.store ?? redis ?? new MemoryStore({ bytes: 64 * 1024 * 1024 });
  // With Redis, rate limits (the login's) count there too: one allowance across every instance.
  const app = new App({
    title: 'fw sample shop',
    version: '1.0.0',
    log: options.log,
    rateStore: redis ?? undefined,
    uploads: { tmpDir: options.uploadDir ?? process.env.UPLOAD_DIR ?? null },
  })
    .use(logger.with({ format: 'json', requestId: true }))
    .use(securityHeaders())
    .use(pages)
    .compress({ minBytes: 1024 })
    .provide(client)
    .provide(warehouse)
    .provide(new WarehouseClient(warehouse))
    .provide(db?.book ?? new OrderBook())
    .provide(Orders.open(store))
    .provide(Imports.open(store))
    .provide(metrics)
    .provide(Dir.open(resolve(process.cwd(), 'sample/files')))
    .controllers(
      ordersController(db !== null),
      ExportsController,
      CatalogController,
      QuoteController,
      FilesController,
      importController(db !== null),
    )
    .controllers(LiveController, SessionController, MetricsController)
    .controllers(AdminController, JwksController)
    // The development issuer mints tokens for anyone who asks: never in production.
    .controllers(...(process.env.NODE_ENV === 'production' ? [] : [DevTokenController]))
    .sessions({ sessionSecret: sessionSecret(options.log ?? console.log) })
    .health('/healthz')
    .openapi({ path: openapiPath(options) })
    .docs()
    // The @Tool routes for AI agents, for the same callers as HTTP (a bearer token or a JWT).
    .mcp({ path: '/mcp', guard: Account })
    .static('/', resolve(process.cwd(), 'sample/public'), {
      maxFileBytes: 256 * 1024,
      spaFallback: 'index.html',
    })
    .onClose(async () => {
      await store.close();
      if (redis !== null && store !== redis) await redis.close();
      await db?.close();
    });
  // Its bytes in use are a gauge on /metrics (fw observes the MemoryStores it is given).
  if (store instanceof MemoryStore) app.provide(store);
  return app;
}

/** Signs sessions when SESSION_SECRET is unset, in development only: it is public (it is in this file), so anyone can forge cookies signed with it. */
export const DEV_SESSION_SECRET = 'fw-sample-development-secret-not-for-production';

/**
 * SESSION_SECRET, else the public development default with one warning line; under
 * NODE_ENV=production the default is refused. A secret under 32 bytes is refused by app.sessions.
 */
function sessionSecret(log: (line: string) => void): string {
  const given = process.env.SESSION_SECRET;
  if (given && given !== DEV_SESSION_SECRET) return given;
  if (process.env.NODE_ENV === 'production') {
    throw new Error(
      'SESSION_SECRET must be set to a secret of at least 32 bytes when NODE_ENV=production (e.g. openssl rand -base64 32); the development default is public',
    );
  }
  log(
    'warning: SESSION_SECRET is not set: sessions are signed with the public development default, which anyone can forge; set SESSION_SECRET (32 bytes or more) outside development',
  );
  return DEV_SESSION_SECRET;
}

function openapiPath(options: ShopOptions): string | undefined {
  const out =
    options.openapiOut !== undefined
      ? options.openapiOut
      : (process.env.OPENAPI_OUT ??
        (process.env.NODE_ENV === 'test' ? null : 'openapi/openapi.json'));
  return out === null ? undefined : resolve(process.cwd(), out);
}
