// What fw's log lines are: pino's shape (a numeric `level`, `time` in epoch ms, `msg`, and the
// fields pino-http and pino's error serializer use), so `pino-pretty` and log shippers read them
// without configuration. The writer behind them (fw's own, or the program's pino) is ../app/log-sink.
import { types } from 'node:util';

/** The levels fw writes, by pino's name; `silent` writes nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** pino's numbers for its level names. */
export const LEVELS = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
} as const;

/** The least level written (`new App({ level })`). */
export type LevelSetting = keyof typeof LEVELS;

/**
 * A logger fw can write through: pino's, or anything with its methods. fw calls `level(obj, msg)`.
 * @example new App({ logger: pino() })
 */
export interface Logger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** An error as pino's `err` serializer writes it, its `cause` chain included. */
export interface SerializedError {
  readonly type: string;
  readonly message: string;
  readonly stack: string;
  readonly code?: string;
  readonly cause?: SerializedError | string;
}

/** The fields of a line besides level, time and msg (`reqId`, `req`, `res`, `responseTime`, `err`…). */
export type LogFields = Readonly<Record<string, unknown>>;

/** Where fw's lines go: the app's writer, given to every feature through the request's core. */
export interface LogWriter {
  /** True when a line of `level` is written (the app's `level` setting). */
  enabled(level: LogLevel): boolean;
  /** Writes one line of `level`: `msg` with `fields`; an `err` field holding an Error is serialized. */
  write(level: LogLevel, fields: LogFields | null, msg: string): void;
  /** Writes `line` as it is: the request logger's `text` format, for people reading a terminal. */
  text(line: string): void;
}

/** How deep a `cause` chain is followed (a cycle or a very long chain stops there). */
const CAUSES = 8;

/** `err` as pino writes it: type, message, stack, code, and the cause chain, each serialized the same way. */
export function serializeError(err: unknown, depth = 0): SerializedError {
  if (!isError(err)) {
    const text = typeof err === 'string' ? err : safeString(err);
    return { type: typeof err, message: text, stack: '' };
  }
  const code = (err as { code?: unknown }).code;
  const cause = err.cause;
  return {
    type: err.name || err.constructor.name,
    message: err.message,
    stack: err.stack ?? '',
    ...(typeof code === 'string' ? { code } : {}),
    ...(cause === undefined
      ? {}
      : {
          cause:
            depth + 1 >= CAUSES
              ? '(cause chain cut)'
              : isError(cause)
                ? serializeError(cause, depth + 1)
                : safeString(cause),
        }),
  };
}

/** An Error, also one made in another realm (Node's own errors inside a test's VM context). */
export const isError = (value: unknown): value is Error =>
  value instanceof Error || types.isNativeError(value);

function safeString(value: unknown): string {
  try {
    return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
