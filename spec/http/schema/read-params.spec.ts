import {
  MAX_PARAMS,
  TOO_MANY,
  declaredNames,
  firstParam,
  readParams,
} from '../../../lib/http/schema';
import type { Params } from '../../../lib/http/schema';
import { IsInt, IsOptional, IsString } from 'class-validator';

/** What URLSearchParams makes of a text, grouped as the readers group it. */
function viaUrlSearchParams(text: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = Object.prototype.hasOwnProperty.call(out, k) ? out[k] : undefined;
    Object.defineProperty(out, k, {
      value: prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v],
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function params(text: string, keep: ReadonlySet<string> | null = null, max = MAX_PARAMS): Params {
  const r = readParams(text, keep, max);
  if (r === TOO_MANY) throw new Error('expected parameters, got TOO_MANY');
  return r;
}

describe('readParams', () => {
  it.each([
    'a=1&b=2',
    'a=1&a=2&a=3&b=x',
    'a+b=c+d&%2B=%2b',
    'name=J%C3%BCrgen&city=K%C3%B6ln',
    'bad=%E0%A4%A&odd=%&x=%zz&y=%4',
    'broken=%C3%28&lone=%FF',
    'noeq&noeq&=onlyvalue&k==v=w',
    '&&a=1&&&b=&',
    'ünïcode=värde&emoji=😀',
    '%5F_proto__=1&__proto__=2&__proto__=3',
  ])('decodes %j exactly as URLSearchParams does', (text) => {
    expect({ ...params(text) }).toEqual(viaUrlSearchParams(text));
    for (const [k] of new URLSearchParams(text))
      expect(firstParam(text, k, MAX_PARAMS)).toBe(new URLSearchParams(text).get(k));
  });

  it('decodes 2,000 seeded random texts exactly as URLSearchParams does', () => {
    const alphabet = [
      'a',
      'b',
      '=',
      '&',
      '%',
      '2',
      'B',
      'b',
      '+',
      'F',
      'C',
      '3',
      '8',
      'é',
      '😀',
      ' ',
    ];
    let seed = 13;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length;
    for (let n = 0; n < 2000; n++) {
      let text = '';
      for (let i = 0; i < 1 + (n % 24); i++) text += alphabet[next()];
      expect({ ...params(text) }).toEqual(viaUrlSearchParams(text));
    }
  });

  it('keeps repeated values in order, in one list', () => {
    const r = params('tag=a&tag=b&tag=c');
    expect(r.tag).toEqual(['a', 'b', 'c']);
  });

  it('keeps only the names asked for, and no prototype', () => {
    const r = params('qty=1&other=2&__proto__=x&__proto__=y&keys=k', new Set(['qty', 'keys']));
    expect(Object.getPrototypeOf(r)).toBeNull();
    expect(Object.keys(r)).toEqual(['qty', 'keys']);
    const all = params('__proto__=x&__proto__=y&constructor=c');
    expect(Object.getPrototypeOf(all)).toBeNull();
    expect(all.__proto__).toEqual(['x', 'y']);
    expect(all.constructor).toBe('c');
  });

  it('reads exactly max parameters and refuses max + 1, whatever it keeps', () => {
    const text = (n: number) => Array.from({ length: n }, (_, i) => `k${i}=v`).join('&');
    expect(Object.keys(params(text(5), null, 5))).toHaveLength(5);
    expect(readParams(text(6), null, 5)).toBe(TOO_MANY);
    expect(readParams(text(6), new Set(['k0']), 5)).toBe(TOO_MANY);
    expect(firstParam(text(5), 'k4', 5)).toBe('v');
    expect(firstParam(text(6), 'k0', 5)).toBe(TOO_MANY);
    expect(readParams('a&&&&b', null, 2)).not.toBe(TOO_MANY);
  });

  it('firstParam gives the first value, an empty string for a bare name, null when absent', () => {
    expect(firstParam('q=1&q=2', 'q', 10)).toBe('1');
    expect(firstParam('x=1&q', 'q', 10)).toBe('');
    expect(firstParam('x=1', 'q', 10)).toBeNull();
    expect(firstParam('', 'q', 10)).toBeNull();
  });

  it('reads a 1 MiB text of one repeated name in full (one list, no copies per repeat)', () => {
    const text = 'a=1&'.repeat(256 * 1024);
    const r = params(text, null, Infinity);
    expect((r.a as string[]).length).toBe(256 * 1024);
  });
});

describe('declaredNames', () => {
  class Page {
    @IsInt() qty!: number;
    @IsOptional() @IsString() sort?: string;
  }
  it('is the names the class declares', () => {
    expect([...declaredNames(Page)]).toEqual(['qty', 'sort']);
  });
});
