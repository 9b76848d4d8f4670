// One instance of the crash server: a child process on a fixed port, killed with SIGKILL, stopped
// with SIGSTOP and started again. It follows the phase lines the server writes, so it knows each
// request in flight and the last step it reached: live (to aim a kill at a step) and, once a
// killed process's last lines are read, where the kill landed for each request it cut.
import { spawn, type ChildProcess } from 'node:child_process';
import { parsePhase } from './phases';

/** What starts one server process (its env names the port and the instance). */
export type ServerCommand = (o: { port: number; name: string }) => {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
};

/** A request in flight in a server process, as its phase lines say. */
export interface InFlight {
  readonly rid: string;
  readonly key: string;
  phase: string;
  /** The answer of its last claim statement, if any ('won' or 'lost'). */
  claim?: 'won' | 'lost';
}

/** Counts over every phase line of every instance. */
export class PhaseCounts {
  /** Runs that threw after writing. */
  threw = 0;
  /** Claim statements that found the key taken (a duplicate raced it). */
  claimsLost = 0;
  /** Handlers run by a request whose last claim found the key taken: never allowed. */
  lostClaimRan = 0;
  /** Handler runs, all instances together. */
  runs = 0;
}

export class Instance {
  readonly name: string;
  readonly port: number;
  readonly #command: ServerCommand;
  readonly #counts: PhaseCounts;
  readonly #live = new Map<string, InFlight>();
  #waiters: Array<() => void> = [];
  #child: ChildProcess | null = null;
  /** Resolves when the process has exited and its last output is read. */
  #gone: Promise<void> = Promise.resolve();
  #output = '';

  constructor(o: { name: string; port: number; command: ServerCommand; counts: PhaseCounts }) {
    this.name = o.name;
    this.port = o.port;
    this.#command = o.command;
    this.#counts = o.counts;
  }

  /** Spawns the process; resolves once it listens (60 s at most). */
  async start(): Promise<void> {
    const { command, args, env } = this.#command({ port: this.port, name: this.name });
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    this.#output = '';
    let rest = '';
    const listening = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(this.#failure('did not start in 60 s')), 60_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        const lines = (rest + chunk.toString()).split('\n');
        rest = lines.pop()!;
        for (const line of lines) {
          if (!line.startsWith('listening')) this.#line(line);
          else {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      child.stderr!.on('data', (chunk: Buffer) => (this.#output += chunk.toString()));
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(this.#failure(`exited at start (${code ?? signal})`));
      });
    });
    const ended = new Promise<void>((r) => child.stdout!.once('close', () => r()));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    this.#gone = Promise.all([ended, exited]).then(() => undefined);
    await listening;
  }

  /** The requests in flight now, with the last step each reached. */
  inFlight(): InFlight[] {
    return [...this.#live.values()];
  }

  /** Resolves true once a request in flight is at a phase `match` accepts, false after `ms`. */
  async waitFor(match: (phase: string) => boolean, ms: number): Promise<boolean> {
    const seen = () => this.inFlight().some((r) => match(r.phase));
    const until = Date.now() + ms;
    while (!seen()) {
      const left = until - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((r) => {
        const timer = setTimeout(r, left).unref();
        this.#waiters.push(() => (clearTimeout(timer), r()));
      });
    }
    return true;
  }

  /** SIGKILL; resolves with the requests it cut (their last phase lines read after the death). */
  async kill(): Promise<InFlight[]> {
    process.kill(this.#child!.pid!, 'SIGKILL');
    await this.#gone;
    const cut = this.inFlight();
    this.#live.clear();
    return cut;
  }

  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    process.kill(this.#child!.pid!, signal);
  }

  /** SIGTERM, and waits for the exit. */
  async shutdown(): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await this.#gone;
  }

  #line(line: string): void {
    const p = parsePhase(line);
    if (p === null) return;
    let r = this.#live.get(p.rid);
    if (r === undefined) this.#live.set(p.rid, (r = { rid: p.rid, key: p.key, phase: p.phase }));
    else r.phase = p.phase;
    this.#count(r, p.phase);
    if (p.phase.startsWith('answered')) this.#live.delete(p.rid);
    for (const w of this.#waiters.splice(0)) w();
  }

  #count(r: InFlight, phase: string): void {
    const c = this.#counts;
    if (phase === 'claim-lost') {
      c.claimsLost++;
      r.claim = 'lost';
    } else if (phase === 'claim-won') r.claim = 'won';
    else if (phase === 'threw') c.threw++;
    else if (phase === 'handler') {
      c.runs++;
      if (r.claim === 'lost') c.lostClaimRan++;
    }
  }

  #failure(what: string): Error {
    return new Error(`crash server ${this.name} ${what}:\n${this.#output.slice(-4000)}`);
  }
}
