import { shop } from './shop/shop';
import { warehouse } from './warehouse/warehouse';

/**
 * `npm start`: the warehouse (unless WAREHOUSE_URL names one) and the shop on HOST:PORT
 * (127.0.0.1:3000), JSON log lines on stdout; SIGTERM drains both and exits 0.
 */
async function main(): Promise<void> {
  const host = process.env.HOST ?? '127.0.0.1';
  let warehouseUrl = process.env.WAREHOUSE_URL;
  const stops: (() => Promise<void>)[] = [];
  if (!warehouseUrl) {
    const w = warehouse({ delayMs: Number(process.env.WAREHOUSE_DELAY_MS ?? 0) });
    warehouseUrl = (
      await w.listen({ host: '127.0.0.1', port: Number(process.env.WAREHOUSE_PORT ?? 0) })
    ).url;
    stops.push(() => w.close());
  }
  const app = shop({ redisUrl: process.env.REDIS_URL, warehouseUrl });
  const { url } = await app.listen({ host, port: Number(process.env.PORT ?? 3000) });
  stops.unshift(() => app.close());
  console.log(`listening on ${url}`);
  const stop = () =>
    void (async () => {
      for (const s of stops) await s();
      process.exit(0);
    })();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
