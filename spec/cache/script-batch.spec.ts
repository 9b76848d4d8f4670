import { ScriptBatch, type ScriptArg } from '../../lib/cache/redis/script-batch';

// ScriptBatch on its own: what it hands its send function, and how it hands the replies
// back. The send here is a recording function, not a store: RedisStore's spec runs it on Redis.

interface Sent {
  readonly keys: string[];
  readonly args: ScriptArg[];
}

/** A batch whose sends are recorded (copied: the batch does not use them again) and answered by `answer`. */
function recording(max: number, answer: (s: Sent) => Promise<unknown[]>) {
  const sent: Sent[] = [];
  const batch = new ScriptBatch((keys, args) => {
    sent.push({ keys: [...keys], args: [...args] });
    return answer({ keys, args });
  }, max);
  return { batch, sent };
}

const echo = (s: Sent): Promise<unknown[]> => Promise.resolve(s.keys.map((k) => `got ${k}`));

describe('ScriptBatch, what it sends', () => {
  it('calls of one turn go in one send, keys in order, their kinds then their arguments flattened', async () => {
    const { batch, sent } = recording(10, echo);
    const answers = await Promise.all([
      batch.call('c', 'a', [1, 'x']),
      batch.call('c', 'b', [2, 'y']),
    ]);
    expect(sent).toEqual([{ keys: ['a', 'b'], args: ['cc', 1, 'x', 2, 'y'] }]);
    expect(answers).toEqual(['got a', 'got b']);
  });

  it('calls of different kinds in one turn share the send, in the order they were made', async () => {
    const { batch, sent } = recording(10, echo);
    const answers = await Promise.all([
      batch.call('k', 'kept', ['claim', 'answer', 9]),
      batch.call('c', 'new', ['claim2', 5]),
      batch.call('k', 'kept2', ['claim3', 'answer3', 9]),
    ]);
    expect(sent).toEqual([
      {
        keys: ['kept', 'new', 'kept2'],
        args: ['kck', 'claim', 'answer', 9, 'claim2', 5, 'claim3', 'answer3', 9],
      },
    ]);
    expect(answers).toEqual(['got kept', 'got new', 'got kept2']);
  });
});

describe('ScriptBatch, when it sends', () => {
  it('the sends of one turn, past max, are all made together once the turn ends', async () => {
    const seen: string[] = [];
    const { batch } = recording(1, (s) => {
      seen.push(`send ${s.keys.join()}`);
      return echo(s);
    });
    const first = Promise.all([batch.call('c', 'a', []), batch.call('c', 'b', [])]);
    expect(seen).toEqual([]); // not before the turn ends
    await first;
    expect(seen).toEqual(['send a', 'send b']);
    await batch.call('c', 'c', []);
    expect(seen.slice(2)).toEqual(['send c']);
  });

  it('nothing is sent before the turn ends, and a later turn sends again', async () => {
    const { batch, sent } = recording(10, echo);
    const first = batch.call('c', 'a', []);
    expect(sent).toHaveLength(0);
    await first;
    await batch.call('c', 'b', []);
    expect(sent.map((s) => s.keys)).toEqual([['a'], ['b']]);
  });

  it('at most max calls in one send, the rest in further sends of the same turn', async () => {
    const { batch, sent } = recording(2, echo);
    const kinds = ['c', 'k', 'c', 'k', 'c'];
    const answers = await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((k, i) => batch.call(kinds[i]!, k, [k])),
    );
    expect(sent.map((s) => s.keys)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(sent.map((s) => s.args)).toEqual([
      ['ck', 'a', 'b'],
      ['ck', 'c', 'd'],
      ['c', 'e'],
    ]);
    expect(answers).toEqual(['got a', 'got b', 'got c', 'got d', 'got e']);
  });
});

describe('ScriptBatch, the answers', () => {
  it('an Error in the replies rejects only its own call', async () => {
    const wrong = new Error('WRONGTYPE');
    const { batch } = recording(10, () => Promise.resolve([null, wrong, 1]));
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((k) => batch.call('c', k, [])));
    expect(settled).toEqual([
      { status: 'fulfilled', value: null },
      { status: 'rejected', reason: wrong },
      { status: 'fulfilled', value: 1 },
    ]);
  });

  it('each call reads its reply element and makes its failure with its own reader', async () => {
    const wrong = new Error('WRONGTYPE');
    const { batch } = recording(10, () => Promise.resolve([1, wrong, 0, wrong]));
    const reader = {
      read: (r: unknown): boolean => r === 1,
      fail: (e: unknown, key: string): Error => new Error(`${key}: ${(e as Error).message}`),
    };
    const settled = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((k) => batch.call('k', k, [], reader)),
    );
    expect(settled).toEqual([
      { status: 'fulfilled', value: true },
      { status: 'rejected', reason: new Error('b: WRONGTYPE') },
      { status: 'fulfilled', value: false },
      { status: 'rejected', reason: new Error('d: WRONGTYPE') },
    ]);
    const lost = new Error('Connection is closed.');
    const failed = recording(10, () => Promise.reject(lost)).batch;
    await expect(failed.call('c', 'a', [], reader)).rejects.toThrow('a: Connection is closed.');
  });

  it('a send that fails rejects every call in it, and only those', async () => {
    const lost = new Error('Connection is closed.');
    let sends = 0;
    const { batch } = recording(2, (s) =>
      ++sends === 1 ? Promise.reject(lost) : Promise.resolve(s.keys),
    );
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((k) => batch.call('c', k, [])));
    expect(settled).toEqual([
      { status: 'rejected', reason: lost },
      { status: 'rejected', reason: lost },
      { status: 'fulfilled', value: 'c' },
    ]);
  });
});
