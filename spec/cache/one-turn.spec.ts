import { OneTurn } from '../../lib/cache/one-turn';

// I28.5 the store's claims and keeps of one turn are flushed together with the lane corked, so
// they leave in one write.

describe('I28.5 OneTurn', () => {
  it('I28.5 runs the flushes asked for in one turn once, together, in order, between before and after', async () => {
    const seen: string[] = [];
    const turn = new OneTurn(
      () => seen.push('before'),
      () => seen.push('after'),
    );
    turn.schedule(() => seen.push('claims'));
    turn.schedule(() => seen.push('keeps'));
    expect(seen).toEqual([]); // not before the turn ends
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['before', 'claims', 'keeps', 'after']);
    turn.schedule(() => seen.push('next'));
    await new Promise((r) => setImmediate(r));
    expect(seen.slice(4)).toEqual(['before', 'next', 'after']);
  });
});
