import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startServer, stopProcess, type RedisProcess } from './redis-process';

/** A real `redis-server` started for a test, on a loopback port of its own, in a temp dir of its own. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the process but keeps its port and dir, so `restart()` can bring it back. */
  halt(): Promise<void>;
  /** Stops the server if running and starts it again on the same port and dir (what it persisted comes back). */
  restart(): Promise<void>;
  /** Stops the server (if running) and removes its dir. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Turn on the append-only file, so entries survive `restart()`. Default false (nothing on disk). */
  readonly appendonly?: boolean;
}

/**
 * Starts `redis-server` and resolves once it answers PING. Throws (never skips) when the
 * binary is missing, so a machine without Redis fails the Redis tests loudly.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fw-redis-'));
  const appendonly = options.appendonly === true;
  let running: RedisProcess | null;
  try {
    running = await startServer(dir, { appendonly });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const { port } = running;
  // SIGTERM lets redis finish writing its append-only file.
  const halt = async (): Promise<void> => {
    if (running !== null) await stopProcess(running.child);
    running = null;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    halt,
    async restart() {
      await halt();
      running = await startServer(dir, { appendonly, port });
    },
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
