import { HttpError } from 'fw-http';
import { DEV_SESSION_SECRET, shop } from '../../sample/shop/shop';

// The sample's session secret: SESSION_SECRET, else a public development default that is
// announced at startup and refused under NODE_ENV=production.
const saved = { secret: process.env.SESSION_SECRET, env: process.env.NODE_ENV };
afterEach(() => {
  for (const [name, value] of [
    ['SESSION_SECRET', saved.secret],
    ['NODE_ENV', saved.env],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

function start(): { lines: string[]; error: unknown } {
  const lines: string[] = [];
  try {
    shop({ log: (l) => lines.push(l), warehouseUrl: 'http://127.0.0.1:1', openapiOut: null });
    return { lines, error: null };
  } catch (error) {
    return { lines, error };
  }
}

describe('the sample session secret', () => {
  it('with no SESSION_SECRET, development uses the default (at least 32 bytes) and logs one warning line naming SESSION_SECRET', () => {
    delete process.env.SESSION_SECRET;
    process.env.NODE_ENV = 'development';
    const { lines, error } = start();
    expect(error).toBeNull();
    expect(Buffer.byteLength(DEV_SESSION_SECRET)).toBeGreaterThanOrEqual(32);
    const warnings = lines.filter((l) => l.includes('SESSION_SECRET'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: /);
  });

  it('a SESSION_SECRET of 32 bytes or more is used without a warning', () => {
    process.env.SESSION_SECRET = 'a-real-secret-that-is-long-enough-0123456789';
    process.env.NODE_ENV = 'production';
    const { lines, error } = start();
    expect(error).toBeNull();
    expect(lines.filter((l) => l.includes('SESSION_SECRET'))).toEqual([]);
  });

  it('NODE_ENV=production refuses to start with no SESSION_SECRET, or with the public default', () => {
    process.env.NODE_ENV = 'production';
    for (const secret of [undefined, '', DEV_SESSION_SECRET]) {
      if (secret === undefined) delete process.env.SESSION_SECRET;
      else process.env.SESSION_SECRET = secret;
      const { error } = start();
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain('SESSION_SECRET');
    }
  });

  it('a SESSION_SECRET shorter than 32 bytes is refused (WeakSessionSecret), in production and out of it', () => {
    process.env.SESSION_SECRET = 'short-secret';
    for (const env of ['production', 'development']) {
      process.env.NODE_ENV = env;
      const { error } = start();
      expect(error).toBeInstanceOf(HttpError);
      expect((error as HttpError).code).toBe('WeakSessionSecret');
    }
  });
});
