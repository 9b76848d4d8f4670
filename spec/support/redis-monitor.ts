import Redis from 'ioredis';

const MARKER = 'fw-monitor-marker';

/**
 * The commands clients sent to the Redis at `url` while `run` ran (not those a script ran inside
 * Redis), each as its arguments. MONITOR shows commands in the order Redis ran them, so once a
 * marker sent after `run` is seen, every command of `run` has been.
 */
export async function commandsDuring(url: string, run: () => Promise<void>): Promise<string[][]> {
  const raw = new Redis(url);
  const monitor = await raw.monitor();
  const sent: string[][] = [];
  monitor.on('monitor', (_t: string, args: string[], source: string) => {
    if (source !== 'lua') sent.push(args);
  });
  try {
    await run();
    await raw.get(MARKER);
    const deadline = Date.now() + 5000;
    while (!sent.some((a) => a.includes(MARKER)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    return sent.filter((a) => !a.includes(MARKER));
  } finally {
    monitor.disconnect();
    raw.disconnect();
  }
}
