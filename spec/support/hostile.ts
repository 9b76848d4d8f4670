import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// What the hostile-client suites measure after an attack: the server still answers, its open
// descriptors and its heap after a full collection are back within a bound. All traffic is to
// 127.0.0.1 only, and every attack is bounded in count and time.

/** Open file descriptors of this process (the server under test runs in it). */
export const openDescriptors = (): number => readdirSync('/proc/self/fd').length;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap bytes in use after full collections (weak references and finalizers given a turn between them). */
export async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return process.memoryUsage().heapUsed;
}

/** Waits (up to `withinMs`) until `read()` is at most `bound`; answers the last reading. Closes are asynchronous. */
export async function settlesWithin(
  read: () => number | Promise<number>,
  bound: number,
  withinMs = 5_000,
): Promise<number> {
  const until = Date.now() + withinMs;
  let now = await read();
  while (now > bound && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    now = await read();
  }
  return now;
}

/** A plain GET on a fresh connection: status and body text (rejects after `timeoutMs` rather than hang). */
export function getOnce(
  port: number,
  path: string,
  timeoutMs = 5_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`GET ${path} got no answer within ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end();
  });
}
