import {
  KeptAnswers,
  type KeptAnswer,
  type RequestParts,
} from '../../lib/http/features/idempotency/kept-answers';

const answer = (fp: string): KeptAnswer => ({
  fp,
  status: 201,
  type: 'application/json',
  body: Buffer.from('{}'),
  own: [],
});
const parts = (body: string, path = '/orders'): RequestParts => ({
  method: 'POST',
  path,
  rawQuery: '',
  body: Buffer.from(body),
});

describe('KeptAnswers (decoded kept answers, checked against the store on every replay)', () => {
  it('decodes a record once while the store gives the same bytes, in the same Buffer or another', () => {
    const answers = new KeptAnswers();
    let decoded = 0;
    const decode = (b: Buffer) => (decoded++, answer(b.toString()));
    const record = Buffer.from('rec-1');
    const first = answers.find('id', record, decode);
    expect(answers.find('id', record, decode)).toBe(first);
    expect(answers.find('id', Buffer.from('rec-1'), decode)).toBe(first);
    expect(decoded).toBe(1);
  });

  it('IDEM-07 decodes again when the store holds other bytes under the id (expired and kept anew, or replaced)', () => {
    const answers = new KeptAnswers();
    const decode = (b: Buffer) => answer(b.toString());
    answers.find('id', Buffer.from('rec-1'), decode);
    expect(answers.find('id', Buffer.from('rec-2'), decode)!.answer.fp).toBe('rec-2');
  });

  it('IDEM-19 does not remember an in-flight claim (decode answers null)', () => {
    const answers = new KeptAnswers();
    let decoded = 0;
    const claim = Buffer.from('claim');
    expect(answers.find('id', claim, () => (decoded++, null))).toBeNull();
    expect(answers.find('id', claim, () => (decoded++, null))).toBeNull();
    expect(decoded).toBe(2);
  });

  it('IDEM-06 knows only a request identical in method, path, query and body bytes to one learned', () => {
    const answers = new KeptAnswers();
    const entry = answers.find('id', Buffer.from('rec'), () => answer('fp'))!;
    expect(KeptAnswers.known(entry, parts('{"a":1}'))).toBe(false);
    const body = Buffer.from('{"a":1}');
    KeptAnswers.learn(entry, { method: 'POST', path: '/orders', rawQuery: '', body });
    body.fill(0x20); // a later write into the request's buffer changes nothing learned
    expect(KeptAnswers.known(entry, parts('{"a":1}'))).toBe(true);
    expect(KeptAnswers.known(entry, parts('{"a":2}'))).toBe(false);
    expect(KeptAnswers.known(entry, parts('{"a":1}', '/other'))).toBe(false);
    expect(KeptAnswers.known(entry, { ...parts('{"a":1}'), rawQuery: 'x=1' })).toBe(false);
    expect(KeptAnswers.known(entry, { ...parts('{"a":1}'), method: 'PUT' })).toBe(false);
  });

  it('is bounded: at most MAX_ENTRIES entries, the oldest dropped first; records over MAX_ENTRY_BYTES are not kept', () => {
    const answers = new KeptAnswers();
    let decoded = 0;
    const decode = (b: Buffer) => (decoded++, answer(b.toString()));
    for (let i = 0; i <= KeptAnswers.MAX_ENTRIES; i++)
      answers.find(`id-${i}`, Buffer.from(`rec-${i}`), decode);
    decoded = 0;
    answers.find(
      `id-${KeptAnswers.MAX_ENTRIES}`,
      Buffer.from(`rec-${KeptAnswers.MAX_ENTRIES}`),
      decode,
    );
    expect(decoded).toBe(0);
    answers.find('id-0', Buffer.from('rec-0'), decode);
    expect(decoded).toBe(1);
    const big = Buffer.alloc(KeptAnswers.MAX_ENTRY_BYTES + 1, 0x61);
    answers.find('big', big, decode);
    answers.find('big', big, decode);
    expect(decoded).toBe(3);
  });

  it('is bounded when the store hands out the same Buffers: an entry dropped for room is not found by its Buffer either', () => {
    const answers = new KeptAnswers();
    let decoded = 0;
    const decode = (b: Buffer) => (decoded++, answer(b.toString()));
    const records = Array.from({ length: KeptAnswers.MAX_ENTRIES + 1 }, (_, i) =>
      Buffer.from(`rec-${i}`),
    );
    records.forEach((r, i) => answers.find(`id-${i}`, r, decode));
    decoded = 0;
    answers.find(`id-${KeptAnswers.MAX_ENTRIES}`, records[KeptAnswers.MAX_ENTRIES], decode);
    expect(decoded).toBe(0);
    answers.find('id-0', records[0], decode);
    expect(decoded).toBe(1);
  });

  it('does not learn a request whose body would pass MAX_ENTRY_BYTES with the record', () => {
    const answers = new KeptAnswers();
    const entry = answers.find('id', Buffer.from('rec'), () => answer('fp'))!;
    const body = 'x'.repeat(KeptAnswers.MAX_ENTRY_BYTES);
    KeptAnswers.learn(entry, parts(body));
    expect(KeptAnswers.known(entry, parts(body))).toBe(false);
  });
});
