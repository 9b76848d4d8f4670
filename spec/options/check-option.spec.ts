import {
  checkBoolean,
  checkNumber,
  checkOneOf,
  checkPositive,
  checkWhole,
  type OptionOwner,
} from '../../lib/options';

// fw's one option checker: each kind of value has one helper, and every refusal names the owner,
// the option and what was given, with the owner's own error.

class OwnError extends Error {}
const store: OptionOwner = { where: 'Store', refuse: (m) => new OwnError(m) };
const plain: OptionOwner = { where: 'rate table' };

function refusal(check: () => unknown): Error {
  try {
    check();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a refusal');
}

describe('checkOptions helpers (lib/options)', () => {
  it('a positive number: finite and above 0, in its unit, at most max when given', () => {
    expect(checkPositive(store, 'leaseMs', 0.5, { unit: 'ms' })).toBe(0.5);
    for (const bad of [0, -1, NaN, Infinity, '5', null, undefined])
      expect(() => checkPositive(store, 'leaseMs', bad, { unit: 'ms' })).toThrow(OwnError);
    expect(refusal(() => checkPositive(store, 'leaseMs', 0, { unit: 'ms' })).message).toBe(
      'Store: leaseMs must be a positive number of ms, got 0',
    );
    expect(
      refusal(() => checkPositive(store, 'deadlineMs', 9, { unit: 'ms', max: 8 })).message,
    ).toBe('Store: deadlineMs must be a positive number of ms, at most 8, got 9');
  });

  it('a whole number: a safe integer within its range, said in the message', () => {
    expect(checkWhole(store, 'replicas', 0, { min: 0 })).toBe(0);
    for (const bad of [1.5, -1, NaN, Infinity, 2 ** 53, '1'])
      expect(() => checkWhole(store, 'replicas', bad, { min: 0 })).toThrow(OwnError);
    expect(refusal(() => checkWhole(store, 'bits', 129, { min: 1, max: 128 })).message).toBe(
      'Store: bits must be a whole number from 1 to 128, got 129',
    );
    expect(
      refusal(() =>
        checkWhole(store, 'replicaTimeoutMs', 500, {
          unit: 'ms',
          min: 1,
          below: 500,
          belowName: 'commandTimeoutMs',
        }),
      ).message,
    ).toBe(
      'Store: replicaTimeoutMs must be a whole number of ms from 1 to less than commandTimeoutMs (500), got 500',
    );
  });

  it('a number in a range: finite, the bounds inclusive or not as given', () => {
    expect(checkNumber(store, 'margin', 0, { min: 0, below: 5 })).toBe(0);
    expect(() => checkNumber(store, 'margin', 5, { min: 0, below: 5 })).toThrow(
      'Store: margin must be a number from 0 to less than 5, got 5',
    );
    expect(() => checkNumber(store, 'waitMs', -1, { unit: 'ms', min: 0, max: 10 })).toThrow(
      'Store: waitMs must be a number of ms from 0 to 10, got -1',
    );
  });

  it('true or false, and one of a few names', () => {
    expect(checkBoolean(store, 'atomic', false)).toBe(false);
    expect(refusal(() => checkBoolean(store, 'atomic', 'yes')).message).toBe(
      'Store: atomic must be true or false, got "yes"',
    );
    expect(checkOneOf(store, 'window', 'fixed', ['fixed', 'sliding'])).toBe('fixed');
    expect(
      refusal(() => checkOneOf(store, 'window', 'rolling', ['fixed', 'sliding'])).message,
    ).toBe(`Store: window must be 'fixed' or 'sliding', got "rolling"`);
    expect(refusal(() => checkOneOf(store, 'mode', 1, ['a', 'b', 'c'])).message).toBe(
      `Store: mode must be one of 'a', 'b', 'c', got 1`,
    );
  });

  it('throws a TypeError when the owner names no error of its own; says what was given', () => {
    const e = refusal(() => checkWhole(plain, 'max', { n: 1 }, { min: 1 }));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toBe('rate table: max must be a whole number from 1, got {"n":1}');
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(refusal(() => checkWhole(plain, 'max', loop, { min: 1 })).message).toBe(
      'rate table: max must be a whole number from 1, got object',
    );
  });
});
