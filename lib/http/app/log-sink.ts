import { hostname } from 'node:os';
import {
  LEVELS,
  serializeError,
  type LevelSetting,
  type LogFields,
  type LogLevel,
  type LogWriter,
  type Logger,
} from '../core/log';

/**
 * Log lines are gathered and written once per turn of the event loop (or when 64 KiB pile up),
 * never one synchronous write per request.
 */
export class LogSink {
  readonly #write: (text: string) => void;
  #lines: string[] = [];
  #bytes = 0;
  #scheduled = false;

  constructor(write: (text: string) => void = (t) => void process.stdout.write(t)) {
    this.#write = write;
  }

  line(text: string): void {
    this.#lines.push(text);
    this.#bytes += text.length + 1;
    if (this.#bytes >= 64 * 1024) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#lines.length === 0) return;
    const text = this.#lines.join('\n') + '\n';
    this.#lines = [];
    this.#bytes = 0;
    this.#write(text);
  }
}

/** What `new App({ logger, log, level })` says about where lines go. */
export interface LogOptions {
  readonly logger?: Logger | undefined;
  readonly log?: ((line: string) => void) | undefined;
  readonly level?: LevelSetting | undefined;
}

/**
 * The least level written: the app's `level`, else the `FW_LOG` environment variable (so a test run
 * can quiet the request lines of an app it does not configure: `FW_LOG=warn npx jest`), else info.
 * An unknown name is a problem for the app's Refusals; until then lines are written from info up.
 */
export function leastLevel(
  level: string | undefined,
  env: string | undefined,
): { readonly level: LevelSetting; readonly problem: string | null } {
  const [setting, named] =
    level !== undefined ? [level, 'new App({ level })'] : [env || undefined, 'FW_LOG'];
  if (setting === undefined) return { level: 'info', problem: null };
  if (Object.hasOwn(LEVELS, setting)) return { level: setting as LevelSetting, problem: null };
  return {
    level: 'info',
    problem: `${named}: ${JSON.stringify(setting)} is not a log level: use one of ${Object.keys(LEVELS).join(', ')}`,
  };
}

/**
 * The app's writer. Without a `logger`, lines are written in pino's shape
 * (`{"level":30,"time":…,"pid":…,"hostname":…,…fields,"msg":…}`) to the sink, batched; with one,
 * each line is a call `logger.info(fields, msg)` and pino (or the program's own logger) writes it.
 */
export class AppLog implements LogWriter {
  readonly #sink: LogSink;
  readonly #logger: Logger | null;
  readonly #least: number;
  /** `{"level":` … is per level; pid and hostname are fixed for the process. */
  readonly #heads: Record<LogLevel, string>;
  readonly #tail: string;

  /** Why the level setting was not taken (an unknown name), for the app's Refusals; else null. */
  readonly problem: string | null;

  constructor(sink: LogSink, options: LogOptions) {
    this.#sink = sink;
    this.#logger = options.logger ?? null;
    const least = leastLevel(options.level, process.env.FW_LOG);
    this.#least = LEVELS[least.level];
    this.problem = least.problem;
    this.#heads = {
      debug: '{"level":20',
      info: '{"level":30',
      warn: '{"level":40',
      error: '{"level":50',
    };
    this.#tail = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  }

  enabled(level: LogLevel): boolean {
    return LEVELS[level] >= this.#least;
  }

  write(level: LogLevel, fields: LogFields | null, msg: string): void {
    if (LEVELS[level] < this.#least) return;
    if (this.#logger !== null) {
      this.#logger[level](fields ?? {}, msg);
      return;
    }
    let line = `${this.#heads[level]},"time":${Date.now()}${this.#tail}`;
    if (fields !== null) {
      const json = JSON.stringify(
        fields.err === undefined ? fields : { ...fields, err: serializeError(fields.err) },
      );
      if (json.length > 2) line += ',' + json.slice(1, -1);
    }
    this.#sink.line(`${line},"msg":${JSON.stringify(msg)}}`);
  }

  text(line: string): void {
    if (LEVELS.info < this.#least) return;
    if (this.#logger !== null) this.#logger.info({}, line);
    else this.#sink.line(line);
  }

  /** A line of the app's own (a static tree's summary, a warning): its level read from a `warning:` or `error:` prefix. */
  line(text: string): void {
    this.write(
      text.startsWith('error:') ? 'error' : text.startsWith('warning:') ? 'warn' : 'info',
      null,
      text,
    );
  }

  flush(): void {
    this.#sink.flush();
  }
}
