// The crash harness's client: a transfer POSTed with its Idempotency-Key to one instance, and
// sent again with the same key until it is answered 201 (the first answer or a replay), as a
// client that must get its transfer through does. Every answer on the way is counted by status.
import http from 'node:http';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

/** Answers counted by what they were: `201`, `409`, `503 LeaseLost`, `no answer`… */
export class Tally {
  readonly #counts = new Map<string, number>();

  add(what: string): void {
    this.#counts.set(what, (this.#counts.get(what) ?? 0) + 1);
  }

  get(what: string): number {
    return this.#counts.get(what) ?? 0;
  }

  entries(): Record<string, number> {
    return Object.fromEntries([...this.#counts].sort(([a], [b]) => a.localeCompare(b)));
  }
}

/** One POST /transfers with `key` (and `x-crash-hold: 1` when `hold`); rejects when no answer comes. */
export function postTransfer(
  port: number,
  key: string,
  o: { hold?: boolean; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ to: `acct-${key.length}`, amount: 7 });
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/transfers',
        agent: false,
        ...(o.signal === undefined ? {} : { signal: o.signal }),
        timeout: o.timeoutMs ?? 15_000,
        headers: {
          'content-type': 'application/json',
          'idempotency-key': key,
          ...(o.hold === true ? { 'x-crash-hold': '1' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (b: Buffer) => (text += b.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Statuses a client retries with the same key: in flight (409), unavailable (503), failed (500). */
const RETRIED = new Set([409, 500, 503]);

/** What one answer counts as: its status, and the start of fw's error message when it gives one. */
export function named(a: Answer): string {
  if (a.status === 201) return '201';
  let error: unknown;
  try {
    error = (JSON.parse(a.body) as { error?: unknown }).error;
  } catch {
    // not JSON: the status alone
  }
  if (typeof error !== 'string') return String(a.status);
  const words = error
    .replace(/"[^"]*"/g, '…')
    .split(/[:,(]/)[0]!
    .trim();
  return `${a.status} ${words.length > 60 ? `${words.slice(0, 57)}...` : words}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * POSTs `key` until it is answered 201, first to `ports[0]`, each retry to one of `ports` at
 * random (a load balancer's choice: an instance down, or refusing the key, does not hold the
 * client); resolves with that body. An answer no client should ever get (400, 422…), 3,000 tries
 * without a 201, or `signal` aborted (the run failed) reject.
 */
export async function untilAnswered(
  ports: readonly number[],
  key: string,
  tally: Tally,
  signal?: AbortSignal,
): Promise<string> {
  for (let tries = 1; tries <= 3000; tries++) {
    signal?.throwIfAborted();
    const port = tries === 1 ? ports[0]! : ports[Math.floor(Math.random() * ports.length)]!;
    try {
      const a = await postTransfer(port, key, signal === undefined ? {} : { signal });
      tally.add(named(a));
      if (a.status === 201) return a.body;
      if (!RETRIED.has(a.status)) throw new Error(`${key}: unexpected ${a.status} ${a.body}`);
    } catch (e) {
      if (e instanceof Error && e.message.startsWith(`${key}: unexpected`)) throw e;
      signal?.throwIfAborted();
      tally.add('no answer'); // the instance was killed under this request, or is not back yet
    }
    await sleep(20 + Math.random() * 40);
  }
  throw new Error(`${key}: unexpected: no 201 after 3000 tries`);
}
