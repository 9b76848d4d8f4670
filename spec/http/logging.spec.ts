import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import pino from 'pino';
import { prettyFactory } from 'pino-pretty';
import { App, Controller, Ctx, Get, Param, Returns, fail, logger } from 'fw-http';

@Controller('/e')
class ErrController {
  @Get('/cause') cause() {
    throw new Error('database connection lost to db-7', {
      cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), {
        code: 'ECONNREFUSED',
      }),
    });
  }
  @Returns(Object)
  @Get('/json')
  json() {
    return JSON.parse('{oops');
  }
  @Returns(String)
  @Get('/file')
  async file() {
    return readFile('/nonexistent/fw-secret-dir/config.json', 'utf8');
  }
  @Get('/coded/{code}') coded(@Param('code') code: string) {
    throw Object.assign(new Error('parse failed at byte 3'), { code });
  }
  @Get('/named') named() {
    throw Object.assign(new Error('field "qty" missing'), { name: 'MissingField' });
  }
  @Get('/internal') internal() {
    throw fail.internal('ledger out of balance by %d', 3);
  }
  @Get('/conflict') conflict() {
    throw fail.conflict('taken');
  }
  @Get('/late') late(c: Ctx) {
    c.sendText(200, 'first');
    throw new Error('after the answer', { cause: new Error('the inner reason') });
  }
  @Returns(String)
  @Get('/ok')
  ok() {
    return 'ok';
  }
}

interface Line {
  level: number;
  time: number;
  msg: string;
  reqId?: string;
  route?: string;
  answered?: boolean;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  err?: {
    type: string;
    message: string;
    stack: string;
    code?: string;
    cause?: { type: string; message: string; stack: string; code?: string };
  };
}

const make = (options: ConstructorParameters<typeof App>[0] = {}) => {
  const lines: string[] = [];
  const app = new App({ log: (l) => lines.push(l), ...options }).controllers(ErrController);
  const logged = async (): Promise<Line[]> => {
    await new Promise((r) => setImmediate(r));
    return lines.map((l) => JSON.parse(l) as Line);
  };
  return { app, lines, logged };
};

describe('errors are logged with what it takes to diagnose them', () => {
  it('LOG-02 FAIL-24 a handler error with a cause: one error line with message, stack and cause; the body has neither', async () => {
    const { app, logged, lines } = make();
    const res = await app.inject({ url: '/e/cause' });
    expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
    expect(res.body).not.toMatch(/db-7|ECONNREFUSED|logging\.spec|at /);
    const all = await logged();
    expect(all).toHaveLength(1);
    const [line] = all;
    expect(line.level).toBe(50);
    expect(line.msg).toBe('GET /e/cause (ErrController.cause): unhandled Error');
    expect(line.route).toBe('GET /e/cause (ErrController.cause)');
    expect(line.reqId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(line.res).toEqual({ statusCode: 500 });
    expect(line.err).toMatchObject({ type: 'Error', message: 'database connection lost to db-7' });
    expect(line.err!.stack).toContain('logging.spec.ts');
    expect(line.err!.cause).toMatchObject({
      type: 'Error',
      message: 'connect ECONNREFUSED 10.0.0.7:5432',
      code: 'ECONNREFUSED',
    });
    expect(line.err!.cause!.stack).toContain('logging.spec.ts');
    expect(lines[0]).not.toContain('\n'); // one line
  });

  it("LOG-03 FAIL-19 the handler's own SyntaxError answers 400 and is logged as a warning with its stack", async () => {
    const { app, logged } = make();
    const res = await app.inject({ url: '/e/json' });
    expect(res.json()).toEqual({ error: 'Bad Request', status: 400 });
    const [line] = await logged();
    expect(line.level).toBe(40);
    expect(line.msg).toBe('GET /e/json (ErrController.json): SyntaxError');
    expect(line.err!.type).toBe('SyntaxError');
    expect(line.err!.stack).toContain('JSON.parse');
  });

  it("LOG-03 FAIL-18 the handler's own ENOENT answers 404 and is logged as a warning; the path is logged, not sent", async () => {
    const { app, logged } = make();
    const res = await app.inject({ url: '/e/file' });
    expect(res.json()).toEqual({ error: 'Not Found', status: 404 });
    expect(res.body).not.toContain('fw-secret-dir');
    const [line] = await logged();
    expect(line.level).toBe(40);
    expect(line.msg).toBe('GET /e/file (ErrController.file): Error ENOENT');
    expect(line.err).toMatchObject({ code: 'ENOENT' });
    expect(line.err!.message).toContain('/nonexistent/fw-secret-dir/config.json');
  });

  it.each(['InvalidCharacter', 'MissingField', 'SyntaxError'])(
    'FAIL-19 an error coded %s answers 400, logged as a warning',
    async (code) => {
      const { app, logged } = make();
      const res = await app.inject({ url: `/e/coded/${code}` });
      expect(res.json()).toEqual({ error: 'Bad Request', status: 400 });
      const [line] = await logged();
      expect([line.level, line.err!.code]).toEqual([40, code]);
    },
  );

  it('FAIL-19 an error named MissingField answers 400 too; another code stays 500', async () => {
    const { app } = make();
    expect((await app.inject({ url: '/e/named' })).status).toBe(400);
    expect((await app.inject({ url: '/e/coded/EOTHER' })).status).toBe(500);
  });

  it('FAIL-13 fail.internal is logged as an error with its message and the stack of the throw', async () => {
    const { app, logged } = make();
    const res = await app.inject({ url: '/e/internal' });
    expect(res.json()).toEqual({ error: 'Internal Server Error', status: 500 });
    const [line] = await logged();
    expect(line.level).toBe(50);
    expect(line.msg).toBe(
      'GET /e/internal (ErrController.internal): fail.internal: ledger out of balance by 3',
    );
    expect(line.err!.stack).toMatch(/ErrController\.internal|logging\.spec\.ts/);
  });

  it('FAIL-09 a plain fail.* is the program answering: no line', async () => {
    const { app, logged } = make();
    expect((await app.inject({ url: '/e/conflict' })).status).toBe(409);
    expect(await logged()).toEqual([]);
  });

  it('LOG-04 the request id of the error line is the X-Request-Id the logger sent', async () => {
    const { app, logged } = make();
    app.use(logger.with({ requestId: true }));
    const res = await app.inject({ url: '/e/cause' });
    const [error, request] = await logged();
    expect(error.reqId).toBe(res.headers['x-request-id']);
    expect(request.reqId).toBe(res.headers['x-request-id']);
    expect(request.res).toEqual({ statusCode: 500 });
  });

  it('FAIL-43 failed after answering: logged with the error, its cause and answered: true', async () => {
    const { app, logged } = make();
    const res = await app.inject({ url: '/e/late' });
    expect([res.status, res.body]).toEqual([200, 'first']);
    const [line] = await logged();
    expect(line.level).toBe(50);
    expect(line.msg).toBe(
      'warning: GET /e/late (ErrController.late) failed after answering 200: GET /e/late (ErrController.late): unhandled Error',
    );
    expect(line.answered).toBe(true);
    expect(line.err).toMatchObject({
      message: 'after the answer',
      cause: { message: 'the inner reason' },
    });
  });
});

describe('app.onError', () => {
  it('LOG-05 is called for every logged error with route, request id, status and answered', async () => {
    const { app, logged } = make();
    const seen: [unknown, object][] = [];
    app.onError((err, info) => void seen.push([err, info]));
    await app.inject({ url: '/e/cause' });
    await app.inject({ url: '/e/json' });
    await app.inject({ url: '/e/late' });
    await app.inject({ url: '/e/conflict' });
    await app.inject({ url: '/e/ok' });
    const lines = await logged();
    expect(seen).toHaveLength(3);
    expect((seen[0][0] as Error).message).toBe('database connection lost to db-7');
    expect(seen.map(([, info]) => info)).toEqual([
      {
        route: 'GET /e/cause (ErrController.cause)',
        requestId: lines[0].reqId,
        status: 500,
        answered: false,
      },
      {
        route: 'GET /e/json (ErrController.json)',
        requestId: lines[1].reqId,
        status: 400,
        answered: false,
      },
      {
        route: 'GET /e/late (ErrController.late)',
        requestId: lines[2].reqId,
        status: 200,
        answered: true,
      },
    ]);
  });

  it('LOG-05 an observer that throws or rejects is logged and ignored: the answer and the other observers go on', async () => {
    const { app, logged } = make();
    const calls: string[] = [];
    app
      .onError(() => {
        throw new Error('sentry is down');
      })
      .onError(() => Promise.reject(new Error('sentry rejected')))
      .onError((_e, info) => void calls.push(info.route));
    const res = await app.inject({ url: '/e/cause' });
    expect(res.json()).toEqual({ error: 'internal server error', status: 500 });
    expect(calls).toEqual(['GET /e/cause (ErrController.cause)']);
    await new Promise((r) => setImmediate(r));
    const lines = await logged();
    expect(lines.map((l) => [l.level, l.err?.message])).toEqual([
      [50, 'database connection lost to db-7'],
      [50, 'sentry is down'],
      [50, 'sentry rejected'],
    ]);
    expect(lines[1].msg).toBe(
      'GET /e/cause (ErrController.cause): an onError observer failed (ignored)',
    );
    expect(lines[1].reqId).toBe(lines[0].reqId);
    expect((await app.inject({ url: '/e/ok' })).body).toBe('ok');
  });
});

describe("log lines in pino's shape", () => {
  it('LOG-01 every line is one JSON object with a numeric level, time in epoch ms and msg', async () => {
    const { app, logged } = make();
    app.use(logger);
    app.log('static /: 3 files');
    app.log('warning: something odd');
    app.log('error: something bad');
    await app.inject({ url: '/e/ok' });
    const lines = await logged();
    expect(lines.map((l) => [l.level, l.msg.replace(/\d+µs/, 'Nµs')])).toEqual([
      [30, 'static /: 3 files'],
      [40, 'warning: something odd'],
      [50, 'error: something bad'],
      [30, 'GET /e/ok 200 Nµs'],
    ]);
    for (const l of lines) expect(Math.abs(l.time - Date.now())).toBeLessThan(60_000);
  });

  it('LOG-06 level silences what is below it', async () => {
    const warn = make({ level: 'warn' });
    warn.app.use(logger);
    warn.app.log('static /: 3 files');
    await warn.app.inject({ url: '/e/ok' });
    await warn.app.inject({ url: '/e/json' });
    expect((await warn.logged()).map((l) => l.level)).toEqual([40]);
    const silent = make({ level: 'silent' });
    silent.app.use(logger.with({ format: 'text' }));
    await silent.app.inject({ url: '/e/cause' });
    expect(await silent.logged()).toEqual([]);
  });

  describe('FW_LOG: the level when the app sets none', () => {
    const before = process.env.FW_LOG;
    afterEach(() => {
      if (before === undefined) delete process.env.FW_LOG;
      else process.env.FW_LOG = before;
    });

    it('LOG-06 FW_LOG=warn quiets the request lines of an app that sets no level; warnings and errors stay', async () => {
      process.env.FW_LOG = 'warn';
      const quiet = make();
      quiet.app.use(logger);
      quiet.app.log('warning: something odd');
      await quiet.app.inject({ url: '/e/ok' });
      await quiet.app.inject({ url: '/e/cause' });
      const lines = await quiet.logged();
      expect(lines.map((l) => l.level)).toEqual([40, 50]);
      expect(lines[1]!.err?.message).toBe('database connection lost to db-7');
      process.env.FW_LOG = 'silent';
      const silent = make();
      silent.app.use(logger.with({ format: 'text' }));
      await silent.app.inject({ url: '/e/cause' });
      expect(await silent.logged()).toEqual([]);
    });

    it('LOG-06 the app’s own level wins over FW_LOG', async () => {
      process.env.FW_LOG = 'silent';
      const { app, logged } = make({ level: 'info' });
      app.use(logger);
      await app.inject({ url: '/e/ok' });
      expect((await logged()).map((l) => l.msg.replace(/\d+µs/, 'Nµs'))).toEqual([
        'GET /e/ok 200 Nµs',
      ]);
    });

    it('an unknown FW_LOG or level is refused at build, naming the setting and the levels', () => {
      process.env.FW_LOG = 'quiet';
      expect(() => make().app.build()).toThrow(
        'FW_LOG: "quiet" is not a log level: use one of trace, debug, info, warn, error, fatal, silent',
      );
      expect(() => make({ level: 'loud' as 'info' }).app.build()).toThrow(
        'new App({ level }): "loud" is not a log level',
      );
    });
  });

  it('LOG-07 new App({ logger }) writes through a pino logger, in the same shape', async () => {
    const out: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        out.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const log = pino({ level: 'info' }, stream);
    const app = new App({ logger: log }).controllers(ErrController).use(logger);
    const res = await app.inject({ url: '/e/cause' });
    expect(res.status).toBe(500);
    await new Promise((r) => setImmediate(r));
    const lines = out.map((l) => JSON.parse(l) as Line);
    expect(lines.map((l) => l.level)).toEqual([50, 30]);
    expect(lines[0]).toMatchObject({
      msg: 'GET /e/cause (ErrController.cause): unhandled Error',
      route: 'GET /e/cause (ErrController.cause)',
      err: { type: 'Error' },
    });
    // pino's own error serializer: the causes' messages and stacks joined into the error's
    expect(lines[0].err!.message).toContain('database connection lost to db-7');
    expect(lines[0].err!.stack).toContain('logging.spec.ts');
    expect(JSON.stringify(lines[0].err)).toContain('connect ECONNREFUSED 10.0.0.7:5432');
    expect(lines[1]).toMatchObject({
      req: { method: 'GET', url: '/e/cause' },
      res: { statusCode: 500 },
    });
    expect(lines[1].reqId).toBe(lines[0].reqId);
  });

  it('LOG-07 any object with pino’s methods will do', async () => {
    const calls: [string, object, string][] = [];
    const mine = {
      debug: (o: object, m: string) => void calls.push(['debug', o, m]),
      info: (o: object, m: string) => void calls.push(['info', o, m]),
      warn: (o: object, m: string) => void calls.push(['warn', o, m]),
      error: (o: object, m: string) => void calls.push(['error', o, m]),
      child: () => mine,
    };
    const app = new App({ logger: mine }).controllers(ErrController);
    await app.inject({ url: '/e/json' });
    expect(calls).toHaveLength(1);
    expect(calls[0][0]).toBe('warn');
    expect(calls[0][1]).toMatchObject({ route: 'GET /e/json (ErrController.json)' });
    expect(calls[0][2]).toBe('GET /e/json (ErrController.json): SyntaxError');
  });

  it('LOG-08 pino-pretty reads a line fw wrote: level and message are printed', async () => {
    const { app, lines } = make();
    app.use(logger);
    await app.inject({ url: '/e/cause' });
    await new Promise((r) => setImmediate(r));
    const pretty = prettyFactory({ colorize: false });
    const error = pretty(lines[0]);
    expect(error).toContain('ERROR');
    expect(error).toContain('GET /e/cause (ErrController.cause): unhandled Error');
    expect(error).toContain('database connection lost to db-7');
    const request = pretty(lines[1]);
    expect(request).toMatch(/INFO.*GET \/e\/cause 500 \d+µs/);
  });
});
