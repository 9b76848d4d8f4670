import type { LogFields, LogLevel, LogWriter } from './log';

/**
 * The logger of one request: the app's writer (fw's own or the program's pino), every line
 * carrying the request's `reqId` as a pino child's bindings would. Fields first, as pino takes them.
 * @example c.log.info({ sku }, 'reserved'); c.log.warn('slow warehouse')
 */
export class RequestLog {
  readonly #writer: LogWriter;
  readonly #bindings: LogFields;

  constructor(writer: LogWriter, bindings: LogFields) {
    this.#writer = writer;
    this.#bindings = bindings;
  }

  /** A logger whose lines carry `bindings` too (pino's `child`). */
  child(bindings: LogFields): RequestLog {
    return new RequestLog(this.#writer, { ...this.#bindings, ...bindings });
  }

  /**
   * True when a line of `level` is written (the app's `level` setting): ask before building a
   * line that costs something to build.
   * @example if (c.log.enabled('debug')) c.log.debug({ plan: explain(query) }, 'query plan')
   */
  enabled(level: LogLevel): boolean {
    return this.#writer.enabled(level);
  }

  /**
   * Writes `line` as it is, without fields, at the info level: a plain line for people reading a
   * terminal (what `logger.with({ format: 'text' })` writes).
   */
  text(line: string): void {
    this.#writer.text(line);
  }

  debug(fieldsOrMsg: LogFields | string, msg?: string): void {
    this.#write('debug', fieldsOrMsg, msg);
  }
  info(fieldsOrMsg: LogFields | string, msg?: string): void {
    this.#write('info', fieldsOrMsg, msg);
  }
  warn(fieldsOrMsg: LogFields | string, msg?: string): void {
    this.#write('warn', fieldsOrMsg, msg);
  }
  error(fieldsOrMsg: LogFields | string, msg?: string): void {
    this.#write('error', fieldsOrMsg, msg);
  }

  #write(level: LogLevel, fieldsOrMsg: LogFields | string, msg: string | undefined): void {
    if (!this.#writer.enabled(level)) return;
    if (typeof fieldsOrMsg === 'string') this.#writer.write(level, this.#bindings, fieldsOrMsg);
    else this.#writer.write(level, { ...this.#bindings, ...fieldsOrMsg }, msg ?? '');
  }
}
