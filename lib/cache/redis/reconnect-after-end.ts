import type { Redis } from 'ioredis';

/**
 * Connects `client` again each time ioredis ends it while the store is open, after `delay(n)` ms
 * for the n-th time in a row. ioredis ends a connection for good when its connector fails rather
 * than retrying: behind Sentinel, a +switch-master heard while it is still asking a sentinel for
 * the master fails that connect "Connection is closed.", and the store would answer `Unavailable`
 * until the process restarted. Returns what stops it (the store's close).
 */
export function reconnectAfterEnd(
  client: Redis,
  isOpen: () => boolean,
  delay: (times: number) => number,
): () => void {
  let times = 0;
  let timer: NodeJS.Timeout | undefined;
  const connectAgain = (): void => {
    timer = undefined;
    if (isOpen() && client.status === 'end') client.connect().catch(() => undefined);
  };
  const onEnd = (): void => {
    if (!isOpen() || timer !== undefined) return;
    times += 1;
    timer = setTimeout(connectAgain, delay(times));
  };
  const onReady = (): void => {
    times = 0;
  };
  client.on('end', onEnd);
  client.on('ready', onReady);
  return () => {
    clearTimeout(timer);
    timer = undefined;
    client.off('end', onEnd);
    client.off('ready', onReady);
  };
}
