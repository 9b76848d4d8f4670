// The faults of a crash run, spread over it as the transfers are answered: SIGKILLs of the server
// instances, each aimed at a step (the harness waits until a request of the victim reports that
// step, then kills at once), and immediate stops of Postgres, held down a while and started again.
// Where each fault landed is recorded from the phase lines (for a kill, read after the death).
import type { InFlight, Instance } from './instance';
import type { Pace } from './pace';
import { INSIDE_TX, WHERE, whereOf, type Where } from './phases';

/** Where the faults of one run landed: requests cut per stretch, and faults with one inside a transaction. */
export class Landings {
  readonly #store: 'pg' | 'redis';
  readonly kills = new Map<Where, number>();
  readonly stops = new Map<Where, number>();
  killsInsideTx = 0;
  stopsInsideTx = 0;

  constructor(store: 'pg' | 'redis') {
    this.#store = store;
  }

  /** One fault and the requests it cut. */
  add(fault: 'kill' | 'stop', cut: readonly InFlight[]): Where[] {
    const where = cut.map((r) => whereOf(this.#store, r));
    const counts = fault === 'kill' ? this.kills : this.stops;
    for (const w of where) counts.set(w, (counts.get(w) ?? 0) + 1);
    if (where.some((w) => INSIDE_TX.includes(w)))
      if (fault === 'kill') this.killsInsideTx++;
      else this.stopsInsideTx++;
    return where;
  }

  /** Requests cut per stretch, every stretch of the store named (0 included). */
  table(fault: 'kill' | 'stop'): Record<string, number> {
    const counts = fault === 'kill' ? this.kills : this.stops;
    return Object.fromEntries(WHERE[this.#store].map((w) => [w, counts.get(w) ?? 0]));
  }
}

export interface Progress {
  /** The transfers answered so far, and the faults planned among them. */
  readonly pace: Pace;
  /** Aborted when the run fails: the faults stop there. */
  readonly signal: AbortSignal;
  readonly log?: ((line: string) => void) | undefined;
}

/** `before the claim ×3; committing ×1`, or `nothing`. */
function summary(where: readonly Where[]): string {
  const n = new Map<Where, number>();
  for (const w of where) n.set(w, (n.get(w) ?? 0) + 1);
  return [...n].map(([w, k]) => `${w} ×${k}`).join('; ') || 'nothing';
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * `kills` SIGKILLs, the i-th once i/(kills+1) of the transfers are answered, of the instances in
 * turn, each aimed at the next phase of `targets` (the harness waits up to 3 s for a request of
 * the victim to reach it), each victim started again at once on its port (in the background).
 */
export async function killAlong(
  o: Progress & { instances: readonly Instance[]; kills: number; targets: readonly string[] },
  landings: Landings,
): Promise<number> {
  let kills = 0;
  const plan = Array.from({ length: o.kills }, (_, i) => o.pace.plan((i + 1) / (o.kills + 1)));
  // Each victim starts again while the run goes on (and the next kill, of the other instance,
  // is made); a victim is killed again only once it is back.
  const back = new Map<Instance, Promise<void>>();
  for (let i = 1; i <= o.kills; i++) {
    await o.pace.reach(plan[i - 1]!, o.signal);
    const victim = o.instances[i % o.instances.length]!;
    await back.get(victim);
    const target = o.targets[(i - 1) % o.targets.length]!;
    await victim.waitFor((phase) => phase.split(' ')[0] === target, 3000);
    const where = landings.add('kill', await victim.kill());
    o.pace.made(plan[i - 1]!);
    kills++;
    o.log?.(`kill ${kills} of ${victim.name} aimed at ${target}: cut ${summary(where)}`);
    const restarting = victim.start();
    restarting.catch(() => undefined); // awaited below, before the next kill of it or the end
    back.set(victim, restarting);
  }
  await Promise.all(back.values());
  return kills;
}

/** What stops Postgres and starts it again. */
export interface StoppableDatabase {
  haltImmediately(): Promise<void>;
  start(): Promise<void>;
}

/**
 * `stops` immediate stops of Postgres, the j-th once (j − ½)/stops of the transfers are answered,
 * when a request is inside a transaction (waited for up to 2 s), each held down `downMs` and
 * started again (crash recovery).
 */
export async function stopAlong(
  o: Progress & {
    instances: readonly Instance[];
    db: StoppableDatabase;
    stops: number;
    downMs: number;
  },
  landings: Landings,
): Promise<number> {
  let stops = 0;
  const plan = Array.from({ length: o.stops }, (_, j) => o.pace.plan((j + 0.5) / o.stops));
  for (let j = 1; j <= o.stops; j++) {
    await o.pace.reach(plan[j - 1]!, o.signal);
    const inTx = (phase: string) => ['begun', 'wrote'].includes(phase);
    await Promise.race(o.instances.map((i) => i.waitFor(inTx, 2000)));
    const cut = o.instances.flatMap((i) => i.inFlight());
    await o.db.haltImmediately();
    o.pace.made(plan[j - 1]!);
    const where = landings.add('stop', cut);
    stops++;
    o.log?.(`postgres stop ${stops}: in flight ${summary(where)}`);
    await sleep(o.downMs);
    await o.db.start();
  }
  return stops;
}
