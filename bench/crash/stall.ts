// A stall past the lease while another instance takes the key over: the stalled instance holds a
// request just after its write (inside its transaction on an atomic route), is stopped there with
// SIGSTOP, and the same key is sent to another instance, which waits for the claim to lapse, takes
// it over and answers. Then the stalled one goes on (SIGCONT) and tries to commit: the claim is no
// longer its own, so nothing of its run may commit. Run on an instance whose clock hides the stall
// and whose renewals never reach the store (harness.ts, HIDDEN_STALL), its lease still looks held
// when it resumes and no refused renewal tells it otherwise, and the check of the claim at the
// commit is what must refuse it.
import { named, postTransfer, untilAnswered, type Tally } from './client';
import type { Instance } from './instance';

/** What the stalled request was answered, and the bodies the key was answered 201 with. */
export interface StallOutcome {
  readonly stalledAnswer: string;
  readonly bodies: readonly string[];
}

export async function stallAndTakeOver(
  o: { stalled: Instance; other: Instance; key: string; signal: AbortSignal },
  tally: Tally,
): Promise<StallOutcome> {
  const { stalled, other, key, signal } = o;
  const first = postTransfer(stalled.port, key, { hold: true, timeoutMs: 60_000, signal }).catch(
    () => null,
  );
  if (!(await stalled.waitFor((phase) => phase === 'hold', 30_000)))
    throw new Error(`stall of ${stalled.name}: the request with ${key} never reached its hold`);
  stalled.signal('SIGSTOP');
  let takenOver: string;
  try {
    // The other instance waits for the stalled claim to lapse, then takes the key and answers.
    takenOver = await untilAnswered([other.port], key, tally, signal);
  } finally {
    stalled.signal('SIGCONT');
  }
  const answer = await first;
  const stalledAnswer = answer === null ? 'no answer' : named(answer);
  tally.add(`stalled: ${stalledAnswer}`);
  const retried = await untilAnswered([stalled.port], key, tally, signal);
  const own = answer?.status === 201 ? [answer.body] : [];
  return { stalledAnswer, bodies: [takenOver, ...own, retried] };
}
