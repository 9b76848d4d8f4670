import { shop } from './shop/shop';

/** `npm start`: the shop on HOST:PORT (127.0.0.1:3000), JSON log lines on stdout; SIGTERM drains and exits 0. */
async function main(): Promise<void> {
  const app = shop({ redisUrl: process.env.REDIS_URL });
  const { url } = await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) });
  console.log(`listening on ${url}`);
  const stop = () => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
