import { createHash } from 'node:crypto';
import net from 'node:net';
import { readReply } from '../../lib/cache/read-reply';
import { LANE_NAME, ScriptLane } from '../../lib/cache/script-lane';
import { sleep, waitFor } from '../support/redis-process';

// I28.5 ScriptLane against a peer of the test's own: a real TCP server on 127.0.0.1 that reads the
// lane's commands and answers as the test scripts it (late, byte by byte, wrongly, never), so the
// connection's states can be driven exactly. spec/cache/script-lane.spec.ts runs it on Redis.

type Answer = (args: string[], peer: Peer) => string | null;

interface Peer {
  readonly port: number;
  /** Every command received, on every connection, in order. */
  readonly commands: string[][];
  /** Each connection: when it was accepted, the chunks it sent, and its socket. */
  readonly connections: { at: number; chunks: number; socket: net.Socket }[];
  answer: Answer;
  close(): Promise<void>;
}

/** The usual answers: +OK to the login, a SHA to SCRIPT LOAD, :1 to anything else. */
const usual: Answer = (args) => {
  const verb = args[0]!.toUpperCase();
  if (verb === 'SCRIPT') return '$40\r\n' + '0'.repeat(40) + '\r\n';
  if (verb === 'AUTH' || verb === 'SELECT' || verb === 'CLIENT') return '+OK\r\n';
  return ':1\r\n';
};

async function startPeer(answer: Answer = usual): Promise<Peer> {
  const sockets = new Set<net.Socket>();
  const peer: Peer = {
    port: 0,
    commands: [],
    connections: [],
    answer,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const conn = { at: Date.now(), chunks: 0, socket };
    peer.connections.push(conn);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      conn.chunks++;
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const read = readReply(pending, 0);
        if (typeof read === 'number') break;
        pending = pending.subarray(read.end);
        const args = (read.value as Buffer[]).map((b) => b.toString());
        peer.commands.push(args);
        const reply = peer.answer(args, peer);
        if (reply !== null) socket.write(reply);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  (peer as { port: number }).port = (server.address() as net.AddressInfo).port;
  return peer;
}

let peer: Peer;
const lanes: ScriptLane[] = [];
beforeEach(async () => {
  peer = await startPeer();
});
afterEach(async () => {
  await Promise.all(lanes.splice(0).map((l) => l.close()));
  await peer.close();
});

function laneTo(options: { password?: string; username?: string; db?: number; ms?: number } = {}) {
  const lane = new ScriptLane(
    {
      host: '127.0.0.1',
      port: peer.port,
      db: options.db ?? 0,
      username: options.username,
      password: options.password,
    },
    ['return 1', 'return 2'],
    options.ms ?? 1000,
  );
  lanes.push(lane);
  return lane;
}

const ready = (lane: ScriptLane) => waitFor('the lane ready', async () => lane.ready, 5000);

describe('ScriptLane logs in', () => {
  it('AUTH with user, SELECT, its name, the scripts loaded: in that order, ready only once all answered', async () => {
    peer.answer = (args, p) =>
      args[0] === 'SCRIPT' && p.commands.length < 6 ? null : usual(args, p);
    const lane = laneTo({ username: 'u', password: 'pw', db: 3 });
    await waitFor('the login sent', async () => peer.commands.length === 5, 5000);
    expect(peer.commands).toEqual([
      ['AUTH', 'u', 'pw'],
      ['SELECT', '3'],
      ['CLIENT', 'SETNAME', LANE_NAME],
      ['SCRIPT', 'LOAD', 'return 1'],
      ['SCRIPT', 'LOAD', 'return 2'],
    ]);
    await sleep(50);
    expect(lane.ready).toBe(false); // the first SCRIPT LOAD is not answered
    await expect(lane.call(0, ['k'], [])).rejects.toThrow('the connection is not ready');
  });

  it('no password and database 0: no AUTH, no SELECT; AUTH with the password alone without a user', async () => {
    await ready(laneTo());
    expect(peer.commands.map((c) => c[0])).toEqual(['CLIENT', 'SCRIPT', 'SCRIPT']);
    peer.commands.length = 0;
    await ready(laneTo({ password: 'pw' }));
    expect(peer.commands[0]).toEqual(['AUTH', 'pw']);
  });
});

describe('ScriptLane refused or unanswered at login', () => {
  it("a refused AUTH keeps it out with Redis's words, and it tries again, backing off 100 ms, then 200", async () => {
    peer.answer = (args, p) => (args[0] === 'AUTH' ? '-WRONGPASS bad\r\n' : usual(args, p));
    const lane = laneTo({ password: 'nope' });
    await waitFor('three attempts', async () => peer.connections.length >= 3, 5000);
    expect(lane.ready).toBe(false);
    expect(lane.lastError?.message).toBe('WRONGPASS bad');
    const [a, b, c] = peer.connections.map((x) => x.at);
    expect(b! - a!).toBeGreaterThanOrEqual(90);
    expect(c! - b!).toBeGreaterThanOrEqual(190);
    expect(b! - a!).toBeLessThan(900); // backing off from 100 ms, not starting at the 1 s ceiling
    peer.answer = usual;
    await ready(lane);
    expect(lane.lastError).toBeNull();
  });

  it('refused CLIENT SETNAME and SCRIPT LOAD do not keep it out', async () => {
    peer.answer = (args, p) =>
      args[0] === 'CLIENT' || args[0] === 'SCRIPT' ? '-NOPERM no\r\n' : usual(args, p);
    await ready(laneTo());
    expect(peer.connections).toHaveLength(1);
  });

  it('a peer that accepts but never answers the login is dropped after timeoutMs and tried again', async () => {
    peer.answer = () => null;
    const lane = laneTo({ ms: 200 });
    await waitFor('a second connection', async () => peer.connections.length >= 2, 5000);
    expect(peer.connections[1]!.at - peer.connections[0]!.at).toBeGreaterThanOrEqual(290);
    expect(lane.ready).toBe(false);
    expect(lane.lastError?.message).toContain('no answer within 200 ms');
  });
});

describe('ScriptLane calls', () => {
  it('EVALSHA with the SHA1 of the script, the key count, keys and arguments; the reply resolves the call', async () => {
    const lane = laneTo();
    await ready(lane);
    peer.answer = (args) => (args[0] === 'EVALSHA' ? '*2\r\n$1\r\na\r\n$-1\r\n' : null);
    expect(await lane.call(1, ['k1', 'k2'], [Buffer.from('v'), 7])).toEqual([
      Buffer.from('a'),
      null,
    ]);
    expect(peer.commands.at(-1)).toEqual(['EVALSHA', sha1('return 2'), '2', 'k1', 'k2', 'v', '7']);
  });

  it('NOSCRIPT: the call is sent again whole (EVAL with the body), once; another error rejects', async () => {
    const lane = laneTo();
    await ready(lane);
    peer.answer = (args) => (args[0] === 'EVALSHA' ? '-NOSCRIPT No matching script\r\n' : ':5\r\n');
    expect(await lane.call(0, ['k'], ['x'])).toBe(5);
    expect(peer.commands.slice(-2).map((c) => c.slice(0, 3))).toEqual([
      ['EVALSHA', sha1('return 1'), '1'],
      ['EVAL', 'return 1', '1'],
    ]);
    peer.answer = () => '-NOSCRIPT still\r\n';
    await expect(lane.call(0, ['k'], [])).rejects.toThrow('NOSCRIPT still'); // not a third time
    peer.answer = () => '-OOM full\r\n';
    await expect(lane.call(0, ['k'], [])).rejects.toThrow('OOM full');
  });
});

describe('ScriptLane reads and writes', () => {
  it('replies that arrive a byte at a time, or several in one chunk, each resolve their own call in order', async () => {
    const lane = laneTo({ ms: 10_000 });
    await ready(lane);
    const big = 'x'.repeat(3000);
    peer.answer = (args, p) => {
      const socket = p.connections[0]!.socket;
      const reply = Buffer.from(
        args[3] === 'big' ? `*1\r\n$${big.length}\r\n${big}\r\n` : ':9\r\n',
      );
      void (async () => {
        for (const byte of reply) {
          socket.write(Buffer.from([byte]));
          await new Promise((r) => setImmediate(r));
        }
      })();
      return null;
    };
    expect(await lane.call(0, ['big'], [])).toEqual([Buffer.from(big)]);
    peer.answer = () => null;
    const sent = peer.commands.length;
    const three = [lane.call(0, ['a'], []), lane.call(0, ['b'], []), lane.call(0, ['c'], [])];
    await waitFor('three sent', async () => peer.commands.length === sent + 3, 5000);
    peer.connections[0]!.socket.write(':1\r\n:2\r\n:3');
    await sleep(20);
    peer.connections[0]!.socket.write('\r\n');
    expect(await Promise.all(three)).toEqual([1, 2, 3]);
  });

  it('cork … uncork: the calls between leave in one write', async () => {
    const lane = laneTo();
    await ready(lane);
    await sleep(50);
    const conn = peer.connections[0]!;
    const before = conn.chunks;
    lane.cork();
    const calls = [lane.call(0, ['a'], []), lane.call(1, ['b'], [])];
    lane.uncork();
    expect(await Promise.all(calls)).toEqual([1, 1]);
    expect(conn.chunks - before).toBe(1);
  });
});

describe('ScriptLane when the peer stalls', () => {
  it('a call unanswered for timeoutMs fails with every call sent after it; one answered in time does not', async () => {
    const lane = laneTo({ ms: 300 });
    await ready(lane);
    await sleep(400); // past the timer armed while connecting: the calls arm their own
    peer.answer = () => null;
    const socket = peer.connections[0]!.socket;
    const sentFirst = Date.now();
    const first = lane.call(0, ['a'], []);
    await sleep(150);
    let secondFailedAt = 0;
    const second = lane.call(0, ['b'], []);
    second.catch(() => (secondFailedAt = Date.now()));
    socket.write(':1\r\n'); // the first, answered in time
    expect(await first).toBe(1);
    await sleep(200); // 350 ms after the first was sent: the second is 200 ms old
    expect(lane.ready).toBe(true);
    const third = lane.call(0, ['c'], []);
    const started = Date.now();
    await expect(second).rejects.toThrow('the connection was lost (no answer within 300 ms)');
    await expect(third).rejects.toThrow('no answer within 300 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    // 300 ms after the second was sent (150 ms after the first), not after the first.
    expect(secondFailedAt - sentFirst).toBeGreaterThanOrEqual(440);
    expect(secondFailedAt - sentFirst).toBeLessThan(1500);
    expect(lane.ready).toBe(false);
    peer.answer = usual;
    await ready(lane);
    expect(await lane.call(0, ['d'], [])).toBe(1);
  });
});

describe('ScriptLane when the peer goes or errs', () => {
  it('a peer gone with a call in flight: the call fails, the lane is not ready, then connects again', async () => {
    const lane = laneTo();
    await ready(lane);
    peer.answer = (_, p) => {
      p.connections[0]!.socket.destroy();
      return null;
    };
    await expect(lane.call(0, ['a'], [])).rejects.toThrow('the connection was lost');
    expect(lane.ready).toBe(false);
    peer.answer = usual;
    await ready(lane);
    expect(peer.connections).toHaveLength(2);
  });

  it('a reply to no command (or bytes that are not RESP) drops the connection, and it connects again', async () => {
    const lane = laneTo();
    await ready(lane);
    peer.answer = () => null; // the next login waits, so why the last connection ended stays told
    peer.connections[0]!.socket.write(':1\r\n');
    await waitFor('a second connection', async () => peer.connections.length === 2, 5000);
    expect(lane.lastError?.message).toBe('Redis sent a reply to no command');
    peer.connections[1]!.socket.destroy();
    peer.answer = usual;
    await waitFor('a third connection', async () => peer.connections.length === 3, 5000);
    await ready(lane);
    peer.answer = () => null;
    peer.connections[2]!.socket.write('?\r\n');
    await waitFor('a fourth connection', async () => peer.connections.length === 4, 5000);
    expect(lane.lastError?.message).toBe('Redis sent a reply of unknown type "?"');
  });
});

describe('ScriptLane close', () => {
  it('close waits for the replies of calls in flight, then ends the connection, and never connects again', async () => {
    const lane = laneTo();
    await ready(lane);
    peer.answer = () => null;
    const call = lane.call(0, ['a'], []);
    await waitFor('sent', async () => peer.commands.at(-1)?.[0] === 'EVALSHA', 5000);
    const closed = lane.close();
    let done = false;
    void closed.then(() => (done = true));
    await sleep(50);
    expect(done).toBe(false);
    peer.connections[0]!.socket.write(':7\r\n');
    expect(await call).toBe(7);
    await closed;
    expect(lane.ready).toBe(false);
    await expect(lane.call(0, ['b'], [])).rejects.toThrow('the connection is not ready');
    await sleep(250);
    expect(peer.connections).toHaveLength(1);
    await lane.close(); // twice is fine
  });
});

describe('ScriptLane close, more', () => {
  it('close waits for the last of several calls in flight, not the first', async () => {
    const lane = laneTo();
    await ready(lane);
    peer.answer = () => null;
    const calls = [lane.call(0, ['a'], []), lane.call(0, ['b'], [])];
    await waitFor(
      'sent',
      async () => peer.commands.filter((c) => c[0] === 'EVALSHA').length === 2,
      5000,
    );
    let done = false;
    const closed = lane.close().then(() => (done = true));
    peer.connections[0]!.socket.write(':1\r\n');
    await sleep(50);
    expect(done).toBe(false);
    peer.connections[0]!.socket.write(':2\r\n');
    expect(await Promise.all(calls)).toEqual([1, 2]);
    await closed;
  });
});

describe('ScriptLane tells why a connect failed, and closes at once when idle', () => {
  it('why a connect failed is told: nothing listening is ECONNREFUSED', async () => {
    const port = peer.port;
    await peer.close();
    const lane = new ScriptLane({ host: '127.0.0.1', port, db: 0 }, ['return 1'], 500);
    lanes.push(lane);
    await waitFor(
      'the refusal told',
      async () => /ECONNREFUSED/.test(lane.lastError?.message ?? ''),
      5000,
    );
    await expect(lane.call(0, ['k'], [])).rejects.toThrow(/not ready \(.*ECONNREFUSED/);
    peer = await startPeer(); // for afterEach
  });

  it('close with nothing in flight ends at once; close while the peer never answers ends within timeoutMs', async () => {
    const idle = laneTo();
    await ready(idle);
    await idle.close();
    const stuck = laneTo({ ms: 200 });
    await ready(stuck);
    peer.answer = () => null;
    const call = stuck.call(0, ['a'], []).catch((e: Error) => e.message);
    await sleep(20);
    const started = Date.now();
    await stuck.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await call).toContain('no answer within 200 ms');
  });
});

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
