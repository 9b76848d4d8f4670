import { createHash } from 'node:crypto';
import net from 'node:net';
import type * as Tls from 'node:tls';
import type { ConnectionOptions } from 'node:tls';
import { backOff } from './connect-redis';
import { encodeCommand } from './encode-command';
import { readReply, type Reply } from './read-reply';
import type { ScriptArg } from './script-batch';

/** The lane's name in Redis's CLIENT LIST. */
export const LANE_NAME = 'fw-script-lane';

/** Where the lane connects and how it logs in: what the store's ioredis client was given. */
export interface LaneAddress {
  readonly host: string;
  readonly port: number;
  readonly family?: number | undefined;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly db: number;
  readonly tls?: ConnectionOptions | undefined;
}

/** One command sent and waiting for its reply, in the order sent. */
interface Sent {
  readonly settle: (reply: Reply) => void;
  readonly at: number;
}

/** The lane's scripts: each body, and its SHA1 (EVALSHA's name for it). */
interface Script {
  readonly lua: string;
  readonly sha: string;
}

/**
 * A connection of fw's own to one Redis, that does one thing: call a few Lua scripts, each call
 * one buffer written and one reply read. The idempotency step's claims and keeps are most of what
 * an idempotent request asks of Redis, and a general driver's command objects, argument
 * conversions and pipelines cost the app more CPU than the call itself (see the reference's
 * "RedisStore's own lane"). Everything else the store does goes through ioredis.
 *
 * It never queues: `ready` says whether a call can be sent now, and the store sends it through
 * ioredis when not. A call not answered within `timeoutMs` fails, with every call sent after it
 * (their replies can no longer be matched), and the connection is made again, as it is after a
 * loss, every 100 ms backing off to 1 s. A script Redis no longer holds (after SCRIPT FLUSH) is
 * sent again whole, once.
 */
export class ScriptLane {
  readonly #address: LaneAddress;
  readonly #scripts: readonly Script[];
  readonly #timeoutMs: number;
  #socket: net.Socket | null = null;
  #ready = false;
  #closed = false;
  #attempts = 0;
  readonly #sent: Sent[] = [];
  /** Bytes of a reply not read whole yet, and the length they must reach before trying again. */
  #chunks: Buffer[] = [];
  #buffered = 0;
  #need = 0;
  #timer: NodeJS.Timeout | null = null;
  #lastError: Error | null = null;
  /** Called once no call waits for its reply (`close` waits for that). */
  #onDrained: (() => void) | null = null;

  constructor(address: LaneAddress, scripts: readonly string[], timeoutMs: number) {
    this.#address = address;
    this.#scripts = scripts.map((lua) => ({
      lua,
      sha: createHash('sha1').update(lua).digest('hex'),
    }));
    this.#timeoutMs = timeoutMs;
    this.#connect();
  }

  /** Whether a call sent now goes out at once (connected and logged in). */
  get ready(): boolean {
    return this.#ready;
  }

  /** Why the last connection failed or ended, for messages; null while it has not. */
  get lastError(): Error | null {
    return this.#lastError;
  }

  /** Calls script number `script` on `keys` and `args`; rejects when it cannot be sent now. */
  call(script: number, keys: readonly string[], args: readonly ScriptArg[]): Promise<Reply> {
    return new Promise((resolve, reject) => {
      if (!this.#ready) {
        reject(new Error(`the connection is not ready${this.#why()}`));
        return;
      }
      const { sha, lua } = this.#scripts[script]!;
      const count = [String(keys.length)];
      const again = (): void =>
        this.#send(encodeCommand(['EVAL', lua], count, keys, args), toResult(resolve, reject));
      this.#send(encodeCommand(['EVALSHA', sha], count, keys, args), (reply) => {
        if (reply instanceof Error && reply.message.startsWith('NOSCRIPT') && this.#ready) again();
        else toResult(resolve, reject)(reply);
      });
    });
  }

  /** Holds what is written until `uncork`, so the calls of one turn leave in one write. */
  cork(): void {
    this.#socket?.cork();
  }

  uncork(): void {
    this.#socket?.uncork();
  }

  /** Waits (at most `timeoutMs`) for the replies of calls sent, then ends the connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#ready = false;
    const socket = this.#socket;
    if (socket === null) return;
    if (this.#sent.length > 0) await this.#drained();
    socket.destroy();
  }

  #send(command: Buffer, settle: (reply: Reply) => void): void {
    this.#sent.push({ settle, at: Date.now() });
    this.#socket!.write(command);
    if (this.#timer === null) this.#watch(this.#timeoutMs);
  }

  #connect(): void {
    const { host, port, family, tls: secure } = this.#address;
    const socket = secure
      ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by the first lane over TLS, not by requiring fw-http: node:tls costs every app's cold start
        (require('node:tls') as typeof Tls).connect({
          host,
          port,
          ...(family ? { family } : {}),
          ...secure,
        })
      : net.connect({ host, port, ...(family ? { family } : {}) });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', (err) => (this.#lastError = err));
    socket.on('close', () => this.#lost(socket));
    socket.once(secure ? 'secureConnect' : 'connect', () => this.#logIn());
    this.#watch(this.#timeoutMs);
  }

  /** AUTH, SELECT and the scripts loaded, pipelined: the lane is ready once every one is OK. */
  #logIn(): void {
    const { username, password, db } = this.#address;
    // Logging in and the database must succeed. The name and the scripts loaded ahead are a
    // courtesy to the operator and a saved round trip: a user whose ACL refuses CLIENT or SCRIPT
    // still gets the lane (a script not loaded is sent whole on its first NOSCRIPT).
    const must: ScriptArg[][] = [];
    if (password) must.push(username ? ['AUTH', username, password] : ['AUTH', password]);
    if (db !== 0) must.push(['SELECT', db]);
    const may: ScriptArg[][] = [['CLIENT', 'SETNAME', LANE_NAME]];
    for (const s of this.#scripts) may.push(['SCRIPT', 'LOAD', s.lua]);
    let left = must.length + may.length;
    const done = (): void => {
      if (--left !== 0 || this.#closed || this.#socket === null) return;
      this.#ready = true;
      this.#attempts = 0;
      this.#lastError = null;
    };
    for (const step of must)
      this.#send(encodeCommand(step), (reply) => {
        // Refused (a wrong password, an unknown database): why is Redis's answer. A connection
        // lost meanwhile has already said why.
        if (!(reply instanceof Error)) done();
        else if (this.#socket !== null) {
          this.#lastError = reply;
          this.#socket.destroy();
        }
      });
    for (const step of may) this.#send(encodeCommand(step), done);
  }

  #read(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    if (this.#buffered < this.#need) return;
    const buf = this.#chunks.length === 1 ? chunk : Buffer.concat(this.#chunks, this.#buffered);
    let at = 0;
    try {
      for (;;) {
        const read = readReply(buf, at);
        if (typeof read === 'number') {
          this.#need = read - at;
          break;
        }
        at = read.end;
        const sent = this.#sent.shift();
        if (sent === undefined) throw new Error('Redis sent a reply to no command');
        sent.settle(read.value);
        if (this.#sent.length === 0) this.#onDrained?.();
      }
    } catch (err) {
      this.#lastError = err as Error;
      this.#socket?.destroy();
      return;
    }
    const rest = at < buf.length ? buf.subarray(at) : null;
    this.#chunks = rest === null ? [] : [rest];
    this.#buffered = rest === null ? 0 : rest.length;
    if (rest === null) this.#need = 0;
  }

  /** Fails every call still waiting and, unless closed, connects again after a back-off. */
  #lost(socket: net.Socket): void {
    if (socket !== this.#socket) return;
    this.#socket = null;
    this.#ready = false;
    this.#chunks = [];
    this.#buffered = this.#need = 0;
    const why = new Error(`the connection was lost${this.#why()}`);
    for (const sent of this.#sent.splice(0)) sent.settle(why);
    this.#onDrained?.();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#closed) return;
    const wait = backOff(++this.#attempts);
    setTimeout(() => {
      if (!this.#closed) this.#connect();
    }, wait).unref();
  }

  /**
   * One timer for every call in flight: when it fires, the oldest call unanswered for `timeoutMs`
   * (or a connection not ready within it) ends the connection; otherwise it waits for the oldest.
   */
  #watch(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      const oldest = this.#sent[0];
      const late = oldest !== undefined && Date.now() - oldest.at >= this.#timeoutMs;
      if (late || (!this.#ready && !this.#closed && this.#socket !== null)) {
        this.#lastError = new Error(`no answer within ${this.#timeoutMs} ms`);
        this.#socket?.destroy();
      } else if (oldest !== undefined) this.#watch(oldest.at + this.#timeoutMs - Date.now());
    }, ms);
    this.#timer.unref();
  }

  #drained(): Promise<void> {
    return new Promise((resolve) => (this.#onDrained = resolve));
  }

  #why(): string {
    return this.#lastError === null ? '' : ` (${this.#lastError.message})`;
  }
}

/** A reply as a call's result: an error reply rejects, anything else resolves. */
function toResult(resolve: (reply: Reply) => void, reject: (err: Error) => void) {
  return (reply: Reply): void => (reply instanceof Error ? reject(reply) : resolve(reply));
}
