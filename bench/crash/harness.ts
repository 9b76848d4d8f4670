// The crash harness: a client sends `requests` idempotent transfers (each its own key), retrying
// each with the same key until it is answered, while the server process is killed with SIGKILL
// `kills` times at moments spread over the run and started again on the same port. At the end the
// ledger (one row per effect) is read and every key asked once more: each key's effect must be
// there exactly once, and every answer given for a key must be the same bytes.
import { spawn, type ChildProcess } from 'node:child_process';
import { Pool } from 'pg';

export interface CrashOptions {
  /** The command that starts one server process, given the port it must listen on. */
  readonly server: (port: number) => { command: string; args: string[]; env: NodeJS.ProcessEnv };
  readonly port: number;
  /** The database holding the `ledger` table the server writes (created here, emptied first). */
  readonly databaseUrl: string;
  readonly requests: number;
  readonly kills: number;
  /** Requests in flight at once. Default 8. */
  readonly concurrency?: number;
  /** A line of progress (kills, restarts). */
  readonly log?: (line: string) => void;
}

export interface CrashReport {
  readonly requests: number;
  readonly kills: number;
  /** Attempts that got no answer (connection lost or refused) or a 409/503, and were retried. */
  readonly retries: number;
  /** Keys whose effect is in the ledger more than once, and the extra rows. */
  readonly duplicatedKeys: number;
  readonly duplicateRows: number;
  /** Keys answered 201 whose effect is not in the ledger, or never answered at all. */
  readonly lost: number;
  /** Keys that got different answers on different requests (the final re-ask included). */
  readonly differingAnswers: number;
  /** Keys whose answer names a ledger row that is not there. */
  readonly answerWithoutRow: number;
  readonly seconds: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs the harness once and reports the counts (it throws only when the setup itself fails). */
export async function runCrash(o: CrashOptions): Promise<CrashReport> {
  const started = Date.now();
  const pool = new Pool({ connectionString: o.databaseUrl, max: 2 });
  pool.on('error', () => undefined); // an idle connection cut when Postgres stops is not a failure
  try {
    await pool.query(
      'CREATE TABLE IF NOT EXISTS ledger (id serial PRIMARY KEY, key text NOT NULL, to_account text NOT NULL, amount int NOT NULL)',
    );
    await pool.query('TRUNCATE ledger');
    const server = new Server(o);
    await server.start();
    const answers = new Map<string, Set<string>>();
    let retries = 0;
    let done = 0;
    const keys = Array.from({ length: o.requests }, (_, i) => `crash-${started}-${i}`);
    const killer = server.killWhile(() => done, o.requests, o.kills);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < keys.length) {
        const key = keys[next++]!;
        const { body, tries } = await untilAnswered(o.port, key);
        retries += tries - 1;
        answers.set(key, new Set([body]));
        done++;
      }
    };
    await Promise.all(Array.from({ length: o.concurrency ?? 8 }, worker));
    await killer;
    // Every key once more, after the last restart: the answer must be the one first given.
    next = 0;
    const again = async (): Promise<void> => {
      while (next < keys.length) {
        const key = keys[next++]!;
        answers.get(key)!.add((await untilAnswered(o.port, key)).body);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency ?? 8 }, again));
    await server.stop();
    return {
      ...(await tally(pool, keys, answers)),
      kills: server.kills,
      retries,
      requests: o.requests,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await pool.end();
  }
}

/** Reads the ledger and compares it with the answers. */
async function tally(
  pool: Pool,
  keys: readonly string[],
  answers: Map<string, Set<string>>,
): Promise<Omit<CrashReport, 'kills' | 'retries' | 'requests' | 'seconds'>> {
  const { rows } = await pool.query<{ key: string; ids: number[] }>(
    'SELECT key, array_agg(id ORDER BY id) AS ids FROM ledger GROUP BY key',
  );
  const ledger = new Map(rows.map((r) => [r.key, r.ids]));
  let duplicatedKeys = 0;
  let duplicateRows = 0;
  let lost = 0;
  let differingAnswers = 0;
  let answerWithoutRow = 0;
  for (const key of keys) {
    const ids = ledger.get(key) ?? [];
    if (ids.length > 1) {
      duplicatedKeys++;
      duplicateRows += ids.length - 1;
    }
    const seen = answers.get(key);
    if (ids.length === 0 || seen === undefined) lost++;
    if (seen === undefined) continue;
    if (seen.size > 1) differingAnswers++;
    for (const body of seen) {
      const id = (JSON.parse(body) as { id: number }).id;
      if (!ids.includes(id)) answerWithoutRow++;
    }
  }
  return { duplicatedKeys, duplicateRows, lost, differingAnswers, answerWithoutRow };
}

/** POSTs the transfer of `key` until it is answered 201 (a replay or the first answer); its body and how many tries it took. */
async function untilAnswered(port: number, key: string): Promise<{ body: string; tries: number }> {
  for (let tries = 1; ; tries++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/transfers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ to: `acct-${key.length}`, amount: 7 }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = await res.text();
      if (res.status === 201) return { body, tries };
      if (res.status !== 409 && res.status !== 503)
        throw new Error(`${key}: unexpected ${res.status} ${body}`);
      if (tries > 2000)
        throw new Error(`${key}: unexpected: still ${res.status} after ${tries} tries: ${body}`);
    } catch (e) {
      if (e instanceof Error && e.message.includes('unexpected')) throw e;
      // No answer: the server was killed under this request, or is not back yet.
    }
    await sleep(50 + Math.random() * 50);
  }
}

/** The server process: started, killed with SIGKILL and started again on the same port. */
class Server {
  readonly #o: CrashOptions;
  #child: ChildProcess | null = null;
  kills = 0;

  constructor(o: CrashOptions) {
    this.#o = o;
  }

  async start(): Promise<void> {
    const { command, args, env } = this.#o.server(this.#o.port);
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server did not start in 60 s:\n${output}`)),
        60_000,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`server exited at start (${code ?? signal}):\n${output}`));
      });
    });
  }

  /** SIGKILL by pid, then a new process on the same port. */
  async killAndRestart(): Promise<void> {
    const child = this.#child!;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      process.kill(child.pid!, 'SIGKILL');
    });
    this.kills++;
    this.#o.log?.(`kill ${this.kills}`);
    await this.start();
  }

  /** Kills `kills` times, the i-th once about i/(kills+1) of the requests are answered (a few ms later, at random). */
  async killWhile(done: () => number, requests: number, kills: number): Promise<void> {
    for (let i = 1; i <= kills; i++) {
      const at = Math.floor((i * requests) / (kills + 1));
      while (done() < at) await sleep(2);
      await sleep(Math.random() * 15);
      await this.killAndRestart();
    }
  }

  async stop(): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      process.kill(child.pid!, 'SIGTERM');
    });
  }
}
