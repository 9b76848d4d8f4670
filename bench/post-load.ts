// A closed-loop load of POSTs, each with a fresh Idempotency-Key, over undici: `clients` loops,
// each on a keep-alive connection of its own, each sending its next request when the last one is
// answered. A run ends by letting every request in flight finish, never by cutting it (as
// autocannon ends a run): a request cut on an atomic route is cancelled in the database and
// counted nowhere, work a real client does not ask for, and it would fall into the next run.
import { Agent, request } from 'undici';

/** One run: answers a second, 201s a second, p99 over every answer, and the count of each status (a failure's with its message). */
export interface Measured {
  readonly rps: number;
  readonly created: number;
  readonly p99: number;
  readonly statuses: Readonly<Record<string, number>>;
}

/** A failure's message (fw answers `{ "error": …, "status": … }`), or the first bytes of its body. */
async function errorOf(body: { text(): Promise<string> }): Promise<string> {
  const text = await body.text();
  try {
    return String((JSON.parse(text) as { error?: unknown }).error);
  } catch {
    return text.slice(0, 60);
  }
}

/** What one run sends, and for how long. */
export interface PostLoad {
  readonly url: string;
  readonly body: string;
  readonly clients: number;
  readonly seconds: number;
}

let keys = 0;

/**
 * Runs the load and measures it; its time runs until the last request in flight is answered.
 * @example const m = await postLoad({ url, body: '{"sku":"tea","qty":2}', clients: 200, seconds: 8 });
 */
export async function postLoad({ url, body, clients, seconds }: PostLoad): Promise<Measured> {
  const agent = new Agent({ connections: clients, pipelining: 1 });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const count = (status: string) => (statuses[status] = (statuses[status] ?? 0) + 1);
  const started = performance.now();
  const until = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < until) {
      const sent = performance.now();
      try {
        const res = await request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `k${keys++}` },
          body,
          dispatcher: agent,
        });
        if (res.statusCode < 300) {
          await res.body.dump();
          count(String(res.statusCode));
        } else count(`${res.statusCode} "${await errorOf(res.body)}"`);
      } catch (e) {
        count(`error ${(e as { code?: string }).code ?? String(e)}`);
      }
      latencies.push(performance.now() - sent);
    }
  };
  await Promise.all(Array.from({ length: clients }, loop));
  const elapsed = (performance.now() - started) / 1000;
  await agent.close();
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / elapsed,
    created: (statuses['201'] ?? 0) / elapsed,
    p99: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    statuses,
  };
}
