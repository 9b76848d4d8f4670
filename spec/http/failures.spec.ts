import {
  App,
  NoContent,
  CodedError,
  Controller,
  Get,
  HttpError,
  Post,
  fail,
  type FailureShape,
  Returns,
} from 'fw-http';
import { CacheError } from 'fw-http/cache';
import { FetchError } from 'fw-http/fetch';

class Problem {
  constructor(
    readonly code: number,
    readonly detail: string,
    readonly meta: { service: string },
  ) {}
  static failure(status: number, message: string): Problem {
    return new Problem(status, message, { service: 'shop' });
  }
}

const long = 'é'.repeat(200); // 400 bytes

@Controller()
class FailController {
  @Get('/bad') bad() {
    throw fail.badRequest('qty %d is not between %s', 0, '1 and 100');
  }
  @Get('/unauthorized') unauthorized() {
    throw fail.unauthorized('who are you');
  }
  @Get('/forbidden') forbidden() {
    throw fail.forbidden('not yours');
  }
  @Get('/notfound') notFound() {
    throw fail.notFound();
  }
  @Get('/conflict') conflict() {
    throw fail.conflict('taken');
  }
  @Get('/toolarge') tooLarge() {
    throw fail.tooLarge('too big');
  }
  @Get('/unprocessable') unprocessable() {
    throw fail.unprocessable('nope');
  }
  @Get('/toomany') tooMany() {
    throw fail.tooManyRequests('slow down');
  }
  @Get('/internal') internal() {
    throw fail.internal('db password wrong at /srv/app.ts:12');
  }
  @Get('/teapot') teapot() {
    throw fail.status(418, 'short and stout');
  }
  @Get('/long') long() {
    throw fail.badRequest(long);
  }
  @Get('/exact') exact() {
    throw fail.badRequest('a'.repeat(240));
  }
  @Get('/async') @Returns(NoContent) async asyncFail() {
    await new Promise((r) => setTimeout(r, 1));
    throw fail.conflict('later');
  }
  @Get('/enoent') enoent() {
    throw Object.assign(new Error("ENOENT: no such file, open '/etc/secret'"), { code: 'ENOENT' });
  }
  @Get('/filenotfound') fileNotFound() {
    throw new HttpError('FileNotFound', 'no file');
  }
  @Returns(Object)
  @Get('/json')
  json() {
    return JSON.parse('{oops');
  }
  @Get('/body-too-large') bodyTooLarge() {
    throw Object.assign(new Error('x'), { code: 'BodyTooLarge' });
  }
  @Get('/body-too-slow') bodyTooSlow() {
    throw Object.assign(new Error('x'), { code: 'BodyTooSlow' });
  }
  @Get('/timeout') timeout() {
    throw Object.assign(new Error('x'), { code: 'Timeout' });
  }
  @Get('/canceled') canceled() {
    throw Object.assign(new Error('x'), { code: 'Canceled' });
  }
  @Get('/boom') boom() {
    throw new TypeError(
      "Cannot read properties of undefined (reading 'x') at /srv/lib/secret.ts:42",
    );
  }
  @Get('/challenge') challenge() {
    throw fail.challenge('bearer', 'who are you');
  }
  @Get('/fetch-timed-out') fetchTimedOut() {
    throw new FetchError('TimedOut', 'GET http://stock.internal/items?token=s3cret');
  }
  @Get('/fetch-too-large') fetchTooLarge() {
    throw new FetchError('BodyTooLarge', 'GET http://stock.internal/items?token=s3cret');
  }
  @Get('/cache-unavailable') cacheUnavailable() {
    throw new CacheError('Unavailable', 'Space "orders": get "user-s3cret" failed');
  }
  @Get('/cache-invalid') cacheInvalid() {
    throw new CacheError('InvalidArgument', 'Space "orders": key "user-s3cret"');
  }
  @Get('/abort-error') abortError() {
    throw AbortSignal.abort().reason;
  }
  @Get('/abort-err') abortErr() {
    throw Object.assign(new Error('The operation was aborted'), {
      name: 'AbortError',
      code: 'ABORT_ERR',
    });
  }
  @Get('/timeout-error') timeoutError() {
    throw new DOMException('signal timed out', 'TimeoutError');
  }
  @Get('/foreign-status') foreignStatus() {
    throw Object.assign(new Error('upstream said 404'), { code: 'ERR_BAD_RESPONSE', status: 404 });
  }
  @Get('/inherited-code') inheritedCode() {
    throw Object.assign(new Error('x'), { code: 'toString' });
  }
  @Post('/text') text() {
    throw fail.notFound('gone');
  }
}

const withLog = () => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l) }).controllers(FailController);
  const flushed = async () => {
    await new Promise((r) => setImmediate(r));
    return lines.join('\n');
  };
  return { app, flushed };
};
const { app } = withLog();
const get = (url: string) => app.inject({ url });

describe('the failure body', () => {
  it('FAIL-01 the default failure body has exactly error and status', async () => {
    const res = await get('/conflict');
    expect(res.json()).toEqual({ error: 'taken', status: 409 });
    expect(Object.keys(res.json<object>())).toEqual(['error', 'status']);
  });

  it('FAIL-02 every failure is application/json, whatever the route sends on success', async () => {
    const res = await app.inject({ method: 'POST', url: '/text' });
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('FAIL-03 a failure with no message uses the reason phrase', async () => {
    expect((await get('/notfound')).json()).toEqual({ error: 'Not Found', status: 404 });
  });

  it('FAIL-04 FAIL-24 no stack, file name or error name is sent; an unknown error is 500 internal server error', async () => {
    const { app, flushed } = withLog();
    const res = await app.inject({ url: '/boom' });
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
    expect(res.body).not.toMatch(/TypeError|secret|\.ts/);
    expect(await flushed()).toContain('GET /boom (FailController.boom): unhandled TypeError');
  });
});

describe('fail.*', () => {
  it.each([
    ['FAIL-05', '/bad', 400],
    ['FAIL-06', '/unauthorized', 401],
    ['FAIL-07', '/forbidden', 403],
    ['FAIL-08', '/notfound', 404],
    ['FAIL-09', '/conflict', 409],
    ['FAIL-10', '/toolarge', 413],
    ['FAIL-11', '/unprocessable', 422],
    ['FAIL-12', '/toomany', 429],
    ['FAIL-14', '/teapot', 418],
  ])('%s %s answers %d', async (_id, url, status) => {
    const res = await get(url);
    expect(res.status).toBe(status);
    expect(res.json<{ status: number }>().status).toBe(status);
  });

  it('FAIL-13 fail.internal answers 500; its message is logged, not sent', async () => {
    const { app, flushed } = withLog();
    const res = await app.inject({ url: '/internal' });
    expect(res.json()).toEqual({ error: 'Internal Server Error', status: 500 });
    expect(await flushed()).toContain('db password wrong');
  });

  it('FAIL-15 a Failure works from an async handler too', async () => {
    expect((await get('/async')).json()).toEqual({ error: 'later', status: 409 });
  });

  it('FAIL-16 the message is built from fmt and args', async () => {
    expect((await get('/bad')).json()).toEqual({
      error: 'qty 0 is not between 1 and 100',
      status: 400,
    });
  });

  it('FAIL-17 LIMITS-03 a message is kept in 240 bytes: exactly 240 whole, longer truncated at a character boundary', async () => {
    expect((await get('/exact')).json<{ error: string }>().error).toBe('a'.repeat(240));
    const cut = (await get('/long')).json<{ error: string }>().error;
    expect(Buffer.byteLength(cut)).toBe(240);
    expect(cut).toBe('é'.repeat(120));
  });
});

describe('errors thrown by a handler', () => {
  it.each([
    ['FAIL-18', '/enoent', 404],
    ['FAIL-18', '/filenotfound', 404],
    ['FAIL-19', '/json', 400],
    ['FAIL-20', '/body-too-large', 413],
    ['FAIL-21', '/body-too-slow', 408],
    ['FAIL-22', '/timeout', 503],
    ['FAIL-23', '/canceled', 503],
  ])('%s %s answers %d', async (_id, url, status) => {
    const res = await get(url);
    expect(res.status).toBe(status);
    expect(res.body).not.toContain('/etc/secret');
  });
});

describe('coded errors of fw/fetch and fw/cache, and errors that mean one of our codes', () => {
  it.each([
    [
      'OPEN-41 a FetchError TimedOut',
      '/fetch-timed-out',
      503,
      'Service Unavailable',
      'FetchError TimedOut',
    ],
    [
      'OPEN-41 FAIL-20 a FetchError BodyTooLarge (one code, one status: 413 as FAIL-20 says)',
      '/fetch-too-large',
      413,
      'Payload Too Large',
      'FetchError BodyTooLarge',
    ],
    [
      'OPEN-59 a CacheError Unavailable',
      '/cache-unavailable',
      503,
      'Service Unavailable',
      'CacheError Unavailable',
    ],
    [
      'a CacheError InvalidArgument',
      '/cache-invalid',
      500,
      'internal server error',
      'CacheError InvalidArgument',
    ],
  ])(
    '%s answers the status of its code in its module table; the message is logged with its code, never sent',
    async (_what, url, status, error, logged) => {
      const { app, flushed } = withLog();
      const res = await app.inject({ url });
      expect(res.json()).toEqual({ error, status });
      expect(res.body).not.toContain('s3cret');
      const line = JSON.parse(await flushed());
      expect(line.msg).toContain(logged);
      expect(line.msg).not.toContain('s3cret'); // the msg names the code; the message is in err
      expect(line.err.message).toContain('s3cret');
      expect(line.level).toBe(status === 500 ? 50 : 40);
    },
  );

  it('each module error is a CodedError whose status is its table row', () => {
    for (const e of [
      new HttpError('BodyTooSlow', 'x'),
      new FetchError('Stalled'),
      new CacheError('Full', 'x'),
    ]) {
      expect(e).toBeInstanceOf(CodedError);
      expect(e).toBeInstanceOf(Error);
    }
    expect(new HttpError('BodyTooSlow', 'x').status).toBe(408);
    expect(new CacheError('Full', 'x').status).toBe(503);
    expect(new CacheError('TooLarge', 'x').status).toBe(500);
  });

  it.each([
    ['FAIL-23 an AbortError (DOMException)', '/abort-error', 503],
    ["FAIL-23 Node's ABORT_ERR", '/abort-err', 503],
    ['FAIL-22 a TimeoutError (DOMException)', '/timeout-error', 503],
  ])('%s answers %d', async (_what, url, status) => {
    const res = await get(url);
    expect(res.status).toBe(status);
    expect(res.json()).toEqual({ error: 'Service Unavailable', status });
  });

  it('FAIL-24 an error from elsewhere is never trusted for its status, and an inherited property name is no code', async () => {
    for (const url of ['/foreign-status', '/inherited-code']) {
      const res = await get(url);
      expect(res.status).toBe(500);
      expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
    }
  });
});

describe('custom failure shape', () => {
  const custom = new App({ log: () => {} }).controllers(FailController).failures(Problem);

  it('FAIL-31 FAIL-32 every failure takes the shape of T.failure(status, message), nested objects included', async () => {
    expect((await custom.inject({ url: '/conflict' })).json()).toEqual({
      code: 409,
      detail: 'taken',
      meta: { service: 'shop' },
    });
    expect((await custom.inject({ url: '/nowhere' })).json()).toEqual({
      code: 404,
      detail: 'no route for GET /nowhere',
      meta: { service: 'shop' },
    });
  });

  it('FAIL-33 a custom-shaped 405 still carries Allow', async () => {
    const res = await custom.inject({ method: 'DELETE', url: '/conflict' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.json<Problem>().code).toBe(405);
  });

  it('FAIL-34 a custom-shaped 401 still carries WWW-Authenticate', async () => {
    const res = await custom.inject({ url: '/challenge' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(res.json()).toEqual({ code: 401, detail: 'who are you', meta: { service: 'shop' } });
  });

  it('FAIL-40 LIMITS-04 a shape with 256 bytes around the message keeps its shape; 257 falls back to the default with the message whole', async () => {
    // envelope = serialised body minus the JSON-escaped message: {"pad":"…","m":<message>} is 14 + pad bytes
    const shape = (pad: number): FailureShape => ({
      failure: (status, message) => ({ pad: 'p'.repeat(pad), m: message, s: status }),
    });
    const size = (pad: number) =>
      Buffer.byteLength(JSON.stringify({ pad: 'p'.repeat(pad), m: '', s: 409 })) - 2;
    const pad256 = 256 - size(0);
    expect(size(pad256)).toBe(256);
    const fits = new App({ log: () => {} }).controllers(FailController).failures(shape(pad256));
    expect(Object.keys((await fits.inject({ url: '/conflict' })).json<object>())).toEqual([
      'pad',
      'm',
      's',
    ]);
    const over = new App({ log: () => {} }).controllers(FailController).failures(shape(pad256 + 1));
    expect((await over.inject({ url: '/conflict' })).json()).toEqual({
      error: 'taken',
      status: 409,
    });
  });
});
