import { ScriptBatch, type ScriptArg } from '../../lib/cache/script-batch';

// I28.5 ScriptBatch on its own: what it hands its send function, and how it hands the replies
// back. The send here is a recording function, not a store: RedisStore's spec runs it on Redis.

interface Sent {
  readonly keys: string[];
  readonly args: ScriptArg[];
}

/** A batch whose sends are recorded and answered by `answer`. */
function recording(max: number, answer: (s: Sent) => Promise<unknown[]>) {
  const sent: Sent[] = [];
  const batch = new ScriptBatch((keys, args) => {
    sent.push({ keys, args });
    return answer({ keys, args });
  }, max);
  return { batch, sent };
}

const echo = (s: Sent): Promise<unknown[]> => Promise.resolve(s.keys.map((k) => `got ${k}`));

describe('I28.5 ScriptBatch', () => {
  it('I28.5 calls of one turn go in one send, keys in order and their arguments flattened', async () => {
    const { batch, sent } = recording(10, echo);
    const answers = await Promise.all([batch.call('a', [1, 'x']), batch.call('b', [2, 'y'])]);
    expect(sent).toEqual([{ keys: ['a', 'b'], args: [1, 'x', 2, 'y'] }]);
    expect(answers).toEqual(['got a', 'got b']);
  });

  it('I28.5 nothing is sent before the turn ends, and a later turn sends again', async () => {
    const { batch, sent } = recording(10, echo);
    const first = batch.call('a', []);
    expect(sent).toHaveLength(0);
    await first;
    await batch.call('b', []);
    expect(sent.map((s) => s.keys)).toEqual([['a'], ['b']]);
  });

  it('I28.5 at most max calls in one send, the rest in further sends of the same turn', async () => {
    const { batch, sent } = recording(2, echo);
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((k) => batch.call(k, [k])));
    expect(sent.map((s) => s.keys)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(sent.map((s) => s.args)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(answers).toEqual(['got a', 'got b', 'got c', 'got d', 'got e']);
  });

  it('I28.5 an Error in the replies rejects only its own call', async () => {
    const wrong = new Error('WRONGTYPE');
    const { batch } = recording(10, () => Promise.resolve([null, wrong, 1]));
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((k) => batch.call(k, [])));
    expect(settled).toEqual([
      { status: 'fulfilled', value: null },
      { status: 'rejected', reason: wrong },
      { status: 'fulfilled', value: 1 },
    ]);
  });

  it('I28.5 a send that fails rejects every call in it, and only those', async () => {
    const lost = new Error('Connection is closed.');
    let sends = 0;
    const { batch } = recording(2, (s) =>
      ++sends === 1 ? Promise.reject(lost) : Promise.resolve(s.keys),
    );
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((k) => batch.call(k, [])));
    expect(settled).toEqual([
      { status: 'rejected', reason: lost },
      { status: 'rejected', reason: lost },
      { status: 'fulfilled', value: 'c' },
    ]);
  });
});
