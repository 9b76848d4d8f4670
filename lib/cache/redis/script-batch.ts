/** One argument of a script call, as ioredis sends it. */
export type ScriptArg = Buffer | string | number;

/**
 * Sends one call of the batched script: the keys of the calls in it, in order, then their kinds
 * (one letter per key, in `args[0]`) and the arguments of each, flattened.
 */
export type SendBatch = (keys: string[], args: ScriptArg[]) => Promise<unknown[]>;

/** How a call's reply element becomes its answer, and an error its failure (`key` as sent). */
export interface ReplyReader<T> {
  read(reply: unknown): T;
  fail(err: unknown, key: string): unknown;
}

/** The calls of one script call: their keys, kinds and arguments, and how to answer each. */
class Part {
  readonly keys: string[] = [];
  /** `args[0]` is the kinds' place, filled in when sent. */
  readonly args: ScriptArg[] = [''];
  kinds = '';
  /** The resolve and reject of each call, in turn. */
  readonly settle: Array<(value: unknown) => void> = [];
  readonly readers: Array<ReplyReader<unknown>> = [];
}

/**
 * The calls made in the same turn of the event loop, of any kind (a claim, a keep), sent as one
 * call of a script that loops over its keys, in the order they were made, at most `max` keys in
 * each. One command instead of many spares the driver a command object, a promise and a reply
 * parse per call, and redis-server a command dispatch and a script's setup: on a machine where the
 * app and Redis share cores, that is most of what an idempotent request adds. The wait is one
 * `setImmediate`, which ioredis's auto-pipelining makes anyway. A reply element that is an error
 * rejects only its own call; a failed send rejects every call in it, as each command failing
 * would. The sends of one turn are made together, so the driver's pipelining writes them at once.
 */
export class ScriptBatch {
  readonly #send: SendBatch;
  readonly #max: number;
  /** The part filling up, and those already full, of this turn. */
  #part: Part | null = null;
  #full: Part[] = [];

  constructor(send: SendBatch, max: number) {
    this.#send = send;
    this.#max = max;
  }

  /**
   * Calls the script's `kind` (one letter) on `key` with `args`; answers that key's reply element
   * as `reader` reads it, or rejects with what it makes of an error (so the caller's promise needs
   * no second one to translate them).
   */
  call<T = unknown>(
    kind: string,
    key: string,
    args: readonly ScriptArg[],
    reader: ReplyReader<T> = AS_IS as ReplyReader<T>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let part = this.#part;
      if (part === null) {
        if (this.#full.length === 0) setImmediate(this.#flush);
        part = this.#part = new Part();
      }
      part.keys.push(key);
      part.kinds += kind;
      for (const arg of args) part.args.push(arg);
      part.settle.push(resolve as (value: unknown) => void, reject);
      part.readers.push(reader);
      if (part.keys.length === this.#max) {
        this.#full.push(part);
        this.#part = null;
      }
    });
  }

  readonly #flush = (): void => {
    const parts = this.#full;
    if (this.#part !== null) parts.push(this.#part);
    this.#full = [];
    this.#part = null;
    for (const part of parts) this.#sendPart(part);
  };

  #sendPart(part: Part): void {
    part.args[0] = part.kinds;
    const { keys, settle, readers } = part;
    this.#send(keys, part.args).then(
      (replies) => {
        for (let i = 0; i < keys.length; i++) {
          const reply = replies[i];
          if (reply instanceof Error) settle[2 * i + 1]!(readers[i]!.fail(reply, keys[i]!));
          else settle[2 * i]!(readers[i]!.read(reply));
        }
      },
      (err: unknown) => {
        for (let i = 0; i < keys.length; i++) settle[2 * i + 1]!(readers[i]!.fail(err, keys[i]!));
      },
    );
  }
}

const AS_IS: ReplyReader<unknown> = { read: (reply) => reply, fail: (err) => err };
