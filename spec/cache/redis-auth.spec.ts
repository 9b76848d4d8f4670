import { randomUUID } from 'node:crypto';
import { RedisStore, type RedisStoreOptions } from 'fw-http/cache';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { cacheError, closingStores, connected, shortContract, shown } from '../support/redis-auth';
import { cliWith } from '../support/redis-process';
import { startRedisSentinel, type RedisSentinelSetup } from '../support/redis-sentinel';

// Credentials for the Redis nodes and for the sentinels, with real servers that ask for them: a
// three-master Redis Cluster with requirepass/masterauth, and a master + replica with
// requirepass/masterauth watched by a sentinel with `sentinel auth-pass` and a requirepass of its
// own, all started for this file on 127.0.0.1 and stopped by pid.

// Random, so finding one in a message can only mean the store put it there.
const PASSWORD = `node-pw-${randomUUID()}`;
const SENTINEL_PASSWORD = `sentinel-pw-${randomUUID()}`;
const WRONG = `wrong-pw-${randomUUID()}`;

let cluster: RedisCluster;
let sentinel: RedisSentinelSetup;
const open = closingStores();

beforeAll(async () => {
  [cluster, sentinel] = await Promise.all([
    startRedisCluster(3, { password: PASSWORD }),
    startRedisSentinel({ password: PASSWORD, sentinelPassword: SENTINEL_PASSWORD }),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([cluster?.stop(), sentinel?.stop()]);
});

describe('RedisStore credentials and TLS options, refused before connecting', () => {
  it('sentinelUsername and sentinelPassword go only with sentinels', async () => {
    for (const option of ['sentinelPassword', 'sentinelUsername'] as const) {
      const withUrl = await cacheError(
        () => new RedisStore({ url: 'redis://127.0.0.1:1', [option]: 'x' } as never),
      );
      expect(withUrl.code).toBe('InvalidArgument');
      expect(withUrl.message).toBe(
        `RedisStore: ${option} is for the sentinels and goes only with sentinels`,
      );
      const withCluster = await cacheError(
        () => new RedisStore({ cluster: [{ host: '127.0.0.1', port: 1 }], [option]: 'x' } as never),
      );
      expect(withCluster.message).toBe(
        `RedisStore: ${option} is for the sentinels and goes only with sentinels`,
      );
    }
  });

  it('username, password, sentinelUsername and sentinelPassword must be non-empty strings, and the message never shows the value', async () => {
    for (const option of ['username', 'password', 'sentinelUsername', 'sentinelPassword']) {
      for (const bad of ['', 42, { secret: WRONG }, [WRONG]]) {
        const err = await cacheError(
          () =>
            new RedisStore({
              sentinels: [{ host: '127.0.0.1', port: 1 }],
              name: 'mymaster',
              [option]: bad,
            } as never),
        );
        expect(err.code).toBe('InvalidArgument');
        expect(err.message).toMatch(
          new RegExp(`^RedisStore: ${option} must be a non-empty string, got an? [\\w ]+$`),
        );
        expect(shown(err)).not.toContain(WRONG);
      }
    }
  });

  it('username or password as options beside credentials in the url are refused naming the option (ioredis would drop the option), and no password is shown', async () => {
    const cases: Array<[url: string, option: 'username' | 'password', value: string]> = [
      [`redis://:${PASSWORD}@127.0.0.1:1`, 'password', WRONG],
      [`redis://shop:${PASSWORD}@127.0.0.1:1`, 'username', 'other'],
      // A user alone in the url: ioredis would take its empty password over the option.
      ['redis://shop@127.0.0.1:1', 'password', WRONG],
      [`rediss://:${PASSWORD}@127.0.0.1:1/0`, 'username', 'shop'],
    ];
    for (const [url, option, value] of cases) {
      const err = await cacheError(() => new RedisStore({ url, [option]: value }));
      expect(err.code).toBe('InvalidArgument');
      expect(err.message).toBe(
        `RedisStore: ${option} is given as an option but url holds credentials too: give username and password all in url or all as options`,
      );
      expect(shown(err)).not.toContain(PASSWORD);
      expect(shown(err)).not.toContain(WRONG);
    }
  });

  it('tls must be true or tls connection options', async () => {
    for (const bad of [false, 'yes', 1, null, [true]]) {
      const err = await cacheError(
        () => new RedisStore({ url: 'redis://127.0.0.1:1', tls: bad } as never),
      );
      expect(err.code).toBe('InvalidArgument');
      expect(err.message).toMatch(
        /^RedisStore: tls must be true or tls\.ConnectionOptions \(such as \{ ca \}\), got /,
      );
    }
  });
});

describe('RedisStore on a password-protected three-master Redis Cluster', () => {
  it('with the password: get, the claim and compare-and-set work on keys of every master', async () => {
    const store = open({ cluster: cluster.nodes, password: PASSWORD, keyPrefix: 'pw:' });
    await connected(store);
    await shortContract(store);
  });

  it('with a username (an ACL user on every node) and its password', async () => {
    const userPassword = `user-pw-${randomUUID()}`;
    for (const { port } of cluster.nodes) {
      expect(
        await cliWith(
          { password: PASSWORD },
          port,
          'ACL',
          'SETUSER',
          'shop',
          'on',
          `>${userPassword}`,
          '~shop:*',
          '+@all',
        ),
      ).toBe('OK');
    }
    const store = open({
      cluster: cluster.nodes,
      username: 'shop',
      password: userPassword,
      keyPrefix: 'shop:',
    });
    await connected(store);
    await shortContract(store);
  });

  it('a wrong password: operations fail Unavailable naming the cluster, never the password', async () => {
    const store = open({ cluster: cluster.nodes, password: WRONG, commandTimeoutMs: 300 });
    const err = await cacheError(() => store.get('k'));
    expect(err.code).toBe('Unavailable');
    const where = `cluster ${cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
    expect(err.message).toContain(`RedisStore ${where}: get "k" failed`);
    expect(err.message).toContain('WRONGPASS');
    expect(shown(err)).not.toContain(WRONG);
    expect(shown(err)).not.toContain(PASSWORD);
    // And again once ioredis has had its answers to AUTH (WRONGPASS) to hand.
    const again = await cacheError(() => store.putIfAbsent('k', Buffer.from('v'), 1000));
    expect(again.code).toBe('Unavailable');
    expect(shown(again)).not.toContain(WRONG);
  });

  it('no password: operations fail Unavailable', async () => {
    const store = open({ cluster: cluster.nodes, commandTimeoutMs: 300 });
    expect((await cacheError(() => store.get('k'))).code).toBe('Unavailable');
  });
});

describe('RedisStore behind a password-protected Sentinel', () => {
  const base = (): RedisStoreOptions => ({
    sentinels: sentinel.sentinels,
    name: sentinel.name,
    password: PASSWORD,
    sentinelPassword: SENTINEL_PASSWORD,
  });

  it('with the passwords of the nodes and of the sentinel: get, the claim and compare-and-set work', async () => {
    const store = open(base());
    await connected(store);
    await shortContract(store);
  });

  it('a wrong sentinel password: Unavailable naming the master group, never a password', async () => {
    const store = open({ ...base(), sentinelPassword: WRONG, commandTimeoutMs: 300 } as never);
    const err = await cacheError(() => store.get('k'));
    expect(err.code).toBe('Unavailable');
    expect(err.message).toContain(
      `RedisStore sentinel ${sentinel.name} via 127.0.0.1:${sentinel.sentinels[0].port}: get "k" failed`,
    );
    expect(err.message).toContain('WRONGPASS');
    for (const secret of [WRONG, PASSWORD]) expect(shown(err)).not.toContain(secret);
  });

  it('a wrong password of the nodes: Unavailable, never a password', async () => {
    const store = open({ ...base(), password: WRONG, commandTimeoutMs: 300 } as never);
    const err = await cacheError(() => store.get('k'));
    expect(err.code).toBe('Unavailable');
    for (const secret of [WRONG, PASSWORD, SENTINEL_PASSWORD])
      expect(shown(err)).not.toContain(secret);
  });

  it('url without credentials and the password option: works on the master', async () => {
    const master = await sentinel.currentMaster();
    const store = open({ url: `redis://127.0.0.1:${master}`, password: PASSWORD });
    await connected(store);
    await shortContract(store);
  });
});
