import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import type { HeaderBag } from '../core/header-rules';
import { JSON_TYPE } from '../core/media-types';
import type { InjectedAnswer, InjectedRequest } from '../route/extensions';

/** The answer `app.inject` resolves to: the injected answer, with its bytes and a JSON reader. */
export interface InjectResult extends InjectedAnswer {
  readonly bytes: Buffer;
  json<T = unknown>(): T;
}

/** The request side of the in-process test client: a readable body with the fields a handler reads. */
export class InjectRequest extends Readable {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly httpVersion = '1.1';
  readonly httpVersionMinor = 1;
  /** The whole body is here from the start, as for a request whose body came with its head. */
  readonly complete = true;
  readonly socket: { readonly remoteAddress: string; readonly encrypted: boolean };
  constructor(options: InjectedRequest) {
    super({ read() {} });
    this.socket = {
      remoteAddress: options.remoteAddress ?? '127.0.0.1',
      encrypted: options.encrypted ?? false,
    };
    this.method = (options.method ?? 'GET').toUpperCase();
    this.url = options.url;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
    let body: Buffer | null = null;
    if (typeof options.body === 'string') body = Buffer.from(options.body);
    else if (options.body instanceof Uint8Array) body = Buffer.from(options.body);
    else if (options.body !== undefined) {
      body = Buffer.from(JSON.stringify(options.body));
      headers['content-type'] ??= JSON_TYPE;
    }
    if (body !== null) {
      headers['content-length'] ??= String(body.length);
      this.push(body);
    }
    this.push(null);
    this.headers = headers;
  }
}

/** The response side: collects what the pipeline writes, as Node's ServerResponse would send it. */
export class InjectResponse extends EventEmitter {
  shouldKeepAlive = true;
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  statusCode = 200;
  readonly #head: boolean;
  #headers: Record<string, string | string[]> = {};
  readonly #chunks: Buffer[] = [];
  readonly done: Promise<InjectResult>;
  #resolve!: (r: InjectResult) => void;

  constructor(method: string) {
    super();
    this.#head = method === 'HEAD';
    this.done = new Promise((resolve) => (this.#resolve = resolve));
  }

  removeHeader(): void {}

  writeHead(status: number, bag: HeaderBag): this {
    this.statusCode = status;
    this.#headers = { ...bag, date: new Date().toUTCString() };
    this.headersSent = true;
    return this;
  }

  write(
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | (() => void),
    cb?: () => void,
  ): boolean {
    if (typeof encoding === 'function') [cb, encoding] = [encoding, undefined];
    if (!this.headersSent) this.writeHead(this.statusCode, {});
    if (!this.#head)
      this.#chunks.push(
        typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : Buffer.from(chunk),
      );
    if (cb) process.nextTick(cb);
    return true;
  }

  end(chunk?: string | Uint8Array | (() => void), encoding?: BufferEncoding): this {
    if (this.writableEnded) return this;
    if (chunk !== undefined && typeof chunk !== 'function') this.write(chunk, encoding);
    else if (!this.headersSent) this.writeHead(this.statusCode, {});
    this.writableEnded = true;
    this.writableFinished = true;
    this.#finish();
    return this;
  }

  destroy(): this {
    this.writableEnded = true;
    this.#finish();
    return this;
  }

  #finish(): void {
    const bytes = Buffer.concat(this.#chunks);
    const body = bytes.toString('utf8');
    this.#resolve({
      status: this.statusCode,
      headers: this.#headers,
      body,
      bytes,
      json: <T>() => JSON.parse(body) as T,
    });
    this.emit('finish');
    this.emit('close');
  }
}
