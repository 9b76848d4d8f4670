import { HttpError } from '../core/errors';
import { fail } from '../core/fail';

/**
 * Where an idempotent request's steps are recorded: the route's opened space (an `OpenSpace` is
 * one), the record key of the request, and how a failure is logged. Reads and writes may answer
 * at once or with a promise.
 */
export interface StepRecords {
  readonly space: {
    readonly maxBytes: number;
    get(key: string): Buffer | null | Promise<Buffer | null>;
    put(key: string, value: Buffer, ttlMs?: number): boolean | Promise<boolean>;
  };
  /** The request's record key in the space (caller and key). */
  readonly record: string;
  /** Where a step that ran but was not recorded is logged (the app's log). */
  readonly core: { log(line: string): void };
  /** The route, as logs name it. */
  readonly label: string;
  /** The request (its `Ctx`): throws when its claim's lease is lost, checked before the step runs. */
  readonly run: { throwIfLeaseLost(): void };
}

/** Longest step name, in characters. */
export const MAX_STEP_NAME = 100;

/**
 * The space key of step `name` of request `record`. Record keys start with a digit (the caller's
 * length), so one starting with `step:` is never one of them, and the name's length first keeps
 * (name, record) pairs apart.
 */
export const stepKey = (record: string, name: string): string =>
  `step:${name.length}:${name}:${record}`;

/**
 * `c.step(name, fn)`: the result of `fn` recorded before it is handed back, so a rerun of the same
 * request (after a crash, a thrown error, a lost lease) reads it instead of running `fn` again.
 * Without records (not an idempotent route, or an atomic one) `fn` just runs. Either way the
 * handler gets the result as JSON gives it back, so a first run and a rerun see the same value.
 */
export async function runStep<T>(
  records: StepRecords | null,
  names: Set<string> | null,
  name: string,
  fn: () => T | Promise<T>,
): Promise<T> {
  checkName(name, names);
  if (records === null) return roundTrip(await fn(), name);
  const key = stepKey(records.record, name);
  let found: Buffer | null;
  try {
    found = await records.space.get(key);
  } catch {
    // Unknown whether the step ran: it is not run blind.
    throw new HttpError('StoreUnavailable', 'idempotency store unavailable');
  }
  if (found !== null) return (JSON.parse(found.toString('utf8')) as { v?: T }).v as T;
  // A process that stalled past its lease does not run the step: another may be running it now.
  // A step that ran is recorded even so: a rerun reads its result rather than running it again.
  records.run.throwIfLeaseLost();
  const text = toJson(await fn(), name);
  await record(records, key, name, Buffer.from(text, 'utf8'));
  return (JSON.parse(text) as { v?: T }).v as T;
}

/**
 * Writes the step's record. The step has run: when the record cannot be written (over the space's
 * maxBytes, the store failing) the handler goes on with the result, and the log says a rerun would
 * run the step again. Failing the request instead would make the client retry, which runs it again.
 */
async function record(records: StepRecords, key: string, name: string, bytes: Buffer) {
  const miss = (why: string): void =>
    records.core.log(
      `error: ${records.label}: step "${name}" ran but was not recorded (${why}): a rerun of this request runs it again`,
    );
  if (bytes.length > records.space.maxBytes) {
    miss(
      `its result is ${bytes.length} bytes, over the space's maxBytes ${records.space.maxBytes}`,
    );
    return;
  }
  try {
    if (!(await records.space.put(key, bytes))) miss('the store did not take it');
  } catch (e) {
    miss(e instanceof Error ? e.message : String(e));
  }
}

function checkName(name: unknown, names: Set<string> | null): void {
  if (typeof name !== 'string' || name === '' || name.length > MAX_STEP_NAME)
    throw fail.internal(
      'c.step name must be a non-empty string of at most %d characters, got %s',
      MAX_STEP_NAME,
      typeof name === 'string' ? `${name.length} characters` : typeof name,
    );
  if (names === null) return;
  if (names.has(name))
    throw fail.internal(
      'c.step "%s" ran twice in one request: give each step its own name (a rerun would read the first result for both)',
      name,
    );
  names.add(name);
}

function roundTrip<T>(value: T, name: string): T {
  return (JSON.parse(toJson(value, name)) as { v?: T }).v as T;
}

/** `{"v":…}`; a value JSON refuses (a BigInt, a cycle) is the program's mistake: 500, the step named. */
function toJson(value: unknown, name: string): string {
  try {
    return JSON.stringify({ v: value });
  } catch (e) {
    throw fail.internal(
      'c.step "%s" returned a value JSON cannot hold (%s)',
      name,
      e instanceof Error ? e.message : String(e),
    );
  }
}
