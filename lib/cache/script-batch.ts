/** One argument of a script call, as ioredis sends it. */
export type ScriptArg = Buffer | string | number;

/** Sends one call of a batched script: `keys` and `args` of every call in it, flattened. */
export type SendBatch = (keys: string[], args: ScriptArg[]) => Promise<unknown[]>;

interface Call {
  readonly key: string;
  readonly args: readonly ScriptArg[];
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The calls of one script made in the same turn of the event loop, sent as one call of its batched
 * form (a script looping over its keys), at most `max` calls in each. One command instead of many
 * spares the driver a command object, a promise and a reply parse per call, and redis-server a
 * command dispatch: on a machine where the app and Redis share cores, that is most of what an
 * idempotent request adds. The wait is one `setImmediate`, which ioredis's auto-pipelining makes
 * anyway. A reply element that is an error rejects only its own call; a failed batch rejects them
 * all, as each command failing would.
 */
export class ScriptBatch {
  readonly #send: SendBatch;
  readonly #max: number;
  readonly #schedule: (flush: () => void) => void;
  #calls: Call[] = [];

  /** `schedule` runs the flush at the end of the turn: `setImmediate` unless given (`OneTurn`). */
  constructor(send: SendBatch, max: number, schedule: (flush: () => void) => void = setImmediate) {
    this.#send = send;
    this.#max = max;
    this.#schedule = schedule;
  }

  call(key: string, args: readonly ScriptArg[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#calls.length === 0) this.#schedule(this.#flush);
      this.#calls.push({ key, args, resolve, reject });
    });
  }

  readonly #flush = (): void => {
    const calls = this.#calls;
    this.#calls = [];
    for (let from = 0; from < calls.length; from += this.#max)
      this.#sendPart(calls.slice(from, from + this.#max));
  };

  #sendPart(calls: Call[]): void {
    const keys: string[] = [];
    const args: ScriptArg[] = [];
    for (const call of calls) {
      keys.push(call.key);
      for (const arg of call.args) args.push(arg);
    }
    this.#send(keys, args).then(
      (replies) => {
        for (let i = 0; i < calls.length; i++) {
          const reply = replies[i];
          if (reply instanceof Error) calls[i]!.reject(reply);
          else calls[i]!.resolve(reply);
        }
      },
      (err: unknown) => {
        for (const call of calls) call.reject(err);
      },
    );
  }
}
