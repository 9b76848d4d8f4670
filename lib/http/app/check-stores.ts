import { OpenSpace } from '../../cache';

/**
 * Asks the store of every provided space (each store once) whether it answers and what its own
 * settings say against keeping records, when the app starts listening. A wrong Redis URL then
 * says so at start, with its cause (host, ECONNREFUSED, a database index out of range), rather
 * than as a 503 on every idempotent request. Logs each problem; answers the stores' failures.
 */
export async function checkStores(
  provided: readonly unknown[],
  log: (line: string) => void,
): Promise<string[]> {
  const byStore = new Map<unknown, OpenSpace>();
  for (const p of provided)
    if (p instanceof OpenSpace && !byStore.has(p.store)) byStore.set(p.store, p);
  const found = await Promise.all(
    [...byStore.values()].map(async (space) => {
      const [problem, warnings] = await Promise.all([space.problem(), space.warnings()]);
      for (const w of warnings) log(`warning: space "${space.space.name}": ${w}`);
      if (problem === null) return null;
      const line = `idempotency store of space "${space.space.name}" does not answer: ${problem}`;
      log(`error: ${line}`);
      return line;
    }),
  );
  return found.filter((f): f is string => f !== null);
}
