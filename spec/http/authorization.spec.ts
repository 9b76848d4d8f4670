import { App, Authorization, Controller, Get, type BasicCredentials, Returns } from 'fw-http';

@Controller()
class BasicController {
  @Returns(Object)
  @Get('/basic')
  basic(@Authorization('basic') auth: BasicCredentials) {
    return auth;
  }
}

const app = new App({ log: () => {} }).controllers(BasicController);
const basic = (bytes: number[] | string) =>
  'Basic ' +
  (typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes)).toString('base64');
const CHALLENGE = 'Basic realm="fw", charset="UTF-8"';

describe('Basic credentials and UTF-8 (AUTH-06)', () => {
  const colon = 0x3a;
  it.each([
    ['a byte that never starts UTF-8 (0xFF)', [0xff, 0xfe, colon, 0x70]],
    ['an overlong encoding of "/" (0xC0 0xAF)', [0x61, 0xc0, 0xaf, colon, 0x70]],
    ['an encoded surrogate (0xED 0xA0 0x80)', [0x61, colon, 0xed, 0xa0, 0x80]],
    ['a sequence cut short at the end (0xE2 0x82)', [0x61, colon, 0xe2, 0x82]],
    ['a continuation byte alone (0x80)', [0x61, colon, 0x80]],
    [
      'latin1 rather than UTF-8 ("jürgen" as 0xFC)',
      [0x6a, 0xfc, 0x72, 0x67, 0x65, 0x6e, colon, 0x70],
    ],
  ])(
    'AUTH-06 Basic credentials that are not valid UTF-8 (%s) are 401 with AUTH-07 WWW-Authenticate',
    async (_what, bytes) => {
      const res = await app.inject({ url: '/basic', headers: { authorization: basic(bytes) } });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(CHALLENGE);
      expect(res.json<{ error: string }>().error).toBe('Basic credentials do not decode');
    },
  );

  it('AUTH-02 valid UTF-8 beyond ASCII decodes, U+FFFD written by the client included', async () => {
    for (const [user, password] of [
      ['jürgen', 'pässwörd'],
      ['名前', 'パス:ワード'],
      ['ann', 'a\uFFFDb'],
    ]) {
      const res = await app.inject({
        url: '/basic',
        headers: { authorization: basic(`${user}:${password}`) },
      });
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ scheme: 'basic', value: `${user}:${password}`, user, password });
    }
  });
});
