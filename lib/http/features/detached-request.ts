import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { writeRawFailure, type HeaderLines } from '../core/error-mapping';

/** How long a request node let go of may take: its body, and the wait for the client's close after the answer. */
export interface DetachedTimes {
  /** The body must be all here within this (408 otherwise, or a cut once the answer has begun). */
  readonly bodyMs: number;
  /** After the answer, the client has this long to close its side before the socket is cut. */
  readonly lingerMs: number;
  /** Nothing read or written for this long while the request is under way: cut (the app's `idleTimeoutMs`; 0: none). */
  readonly idleMs: number;
  /** Header lines every answer carries (the app's security headers), raw failures included. */
  readonly early?: HeaderLines;
}

const MAX_SIZE_LINE = 4 * 1024; // a chunk-size line with its extensions
const MAX_TRAILER_BYTES = 16 * 1024;
const EMPTY = Buffer.alloc(0);

type Framing = { readonly length: number } | typeof CHUNKED;
const CHUNKED = Symbol('chunked');

/**
 * A request that node's HTTP server handed over with its raw socket because it carried
 * `Connection: Upgrade` (node gives every such request to the `upgrade` listener, and from then on
 * reads nothing more from the socket: no body, no timeouts, no place in the server's connection
 * list). Served here as ordinary HTTP/1.1, as node, nginx and Go serve an Upgrade they do not take:
 * the body, framed by `Content-Length` or chunked, is read from the socket into the request stream;
 * the answer closes the connection. Every wait is bounded, and the socket is released once the
 * answer is out and the client has closed (or `lingerMs` has passed).
 */
export class DetachedRequest {
  /** The request to dispatch: node's copy has ended its stream already (it reads no body after an upgrade). */
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly #req: IncomingMessage;
  readonly #socket: Socket;
  readonly #times: DetachedTimes;
  #answered = false;
  #bodyDone = false;
  #bodyTimer: NodeJS.Timeout | null = null;
  // Body decoding: bytes left of the body (length framing) or of the current chunk.
  #chunked = false;
  #left = 0;
  #state: 'data' | 'size' | 'dataEnd' | 'trailer' = 'data';
  #line = '';
  #trailerBytes = 0;

  /**
   * Null when the request's framing is refused (400 written on the socket). `head` is what node read
   * past the request head: the body's first bytes (null when they belong to a WebSocket instead).
   */
  static serve(
    req: IncomingMessage,
    socket: Socket,
    head: Buffer | null,
    times: DetachedTimes,
  ): DetachedRequest | null {
    const framing = framingOf(req);
    if (typeof framing === 'string') {
      writeRawFailure(socket, 400, framing, times.early);
      linger(socket, times.lingerMs);
      return null;
    }
    const detached = new DetachedRequest(req, socket, times);
    detached.#readBody(framing, head ?? EMPTY);
    return detached;
  }

  private constructor(parsed: IncomingMessage, socket: Socket, times: DetachedTimes) {
    const req = (this.req = this.#req = new IncomingMessage(socket));
    req.httpVersionMajor = parsed.httpVersionMajor;
    req.httpVersionMinor = parsed.httpVersionMinor;
    req.httpVersion = parsed.httpVersion;
    req.method = parsed.method;
    req.url = parsed.url;
    req.rawHeaders = parsed.rawHeaders;
    req.headers = parsed.headers;
    this.#socket = socket;
    this.#times = times;
    const res = (this.res = new ServerResponse(req));
    res.assignSocket(socket);
    res.shouldKeepAlive = false;
    res.once('finish', () => this.#onAnswered());
    socket.once('close', () => this.#onClose());
    this.#watchQuiet();
  }

  /** Reads the body as `framing` says, `head` holding its first bytes: it starts on the socket. */
  #readBody(framing: Framing | null, head: Buffer): void {
    const socket = this.#socket;
    this.#chunked = framing === CHUNKED;
    if (framing === null || (framing !== CHUNKED && framing.length === 0)) {
      this.#endBody();
      return;
    }
    if (framing === CHUNKED) this.#state = 'size';
    else this.#left = framing.length;
    this.#bodyTimer = setTimeout(
      () => this.#cut(408, 'request body did not arrive in time'),
      this.#times.bodyMs,
    );
    this.#bodyTimer.unref();
    // The request stream asks for more by resuming the socket (IncomingMessage#_read).
    socket.on('data', this.#onData);
    socket.once('end', () => {
      if (!this.#bodyDone) this.#cut(400, 'request body ended early');
    });
    socket.resume();
    if (head.length > 0) this.#onData(head);
  }

  /** True once the answer has been written whole. */
  get answered(): boolean {
    return this.#answered;
  }

  readonly #onData = (d: Buffer): void => {
    if (this.#bodyDone) return; // past the body (a pipelined request): the connection closes after this answer
    const problem = this.#chunked ? this.#chunk(d) : this.#take(d);
    if (problem !== null) this.#cut(400, problem);
  };

  /** Length framing: the next `#left` bytes are body. */
  #take(d: Buffer): string | null {
    const n = Math.min(d.length, this.#left);
    this.#push(n === d.length ? d : d.subarray(0, n));
    this.#left -= n;
    if (this.#left === 0) this.#endBody();
    return null;
  }

  /** Chunked framing (RFC 9112 §7.1): size line, data, CRLF, …, a zero size, trailers, an empty line. */
  #chunk(d: Buffer): string | null {
    let i = 0;
    while (i < d.length && !this.#bodyDone) {
      if (this.#state === 'data') {
        const n = Math.min(d.length - i, this.#left);
        this.#push(d.subarray(i, i + n));
        i += n;
        this.#left -= n;
        if (this.#left === 0) this.#state = 'dataEnd';
        continue;
      }
      const nl = d.indexOf(0x0a, i);
      const part = d.toString('latin1', i, nl === -1 ? d.length : nl + 1);
      i = nl === -1 ? d.length : nl + 1;
      this.#line += part;
      if (this.#state === 'trailer') this.#trailerBytes += part.length;
      if (this.#line.length > MAX_SIZE_LINE || this.#trailerBytes > MAX_TRAILER_BYTES)
        return 'chunked body framing too long';
      if (nl === -1) break;
      const line = this.#line;
      this.#line = '';
      if (!line.endsWith('\r\n')) return 'chunked body line without CRLF';
      if (this.#state === 'dataEnd') {
        if (line !== '\r\n') return 'chunk data longer than its size';
        this.#state = 'size';
      } else if (this.#state === 'size') {
        const m = /^([0-9A-Fa-f]{1,12})(?:[ \t]*;[^\r\n]*)?\r\n$/.exec(line);
        if (m === null) return 'bad chunk size';
        this.#left = parseInt(m[1]!, 16);
        this.#state = this.#left === 0 ? 'trailer' : 'data';
      } else if (line === '\r\n') this.#endBody(); // trailers (ignored, as node does) end at an empty line
    }
    return null;
  }

  #push(piece: Buffer): void {
    if (piece.length > 0 && !this.#req.push(piece)) this.#socket.pause();
  }

  #endBody(): void {
    this.#bodyDone = true;
    if (this.#bodyTimer !== null) clearTimeout(this.#bodyTimer);
    this.#req.complete = true;
    this.#req.push(null);
  }

  #onAnswered(): void {
    this.#answered = true;
    this.#req.resume();
    this.#socket.end();
    linger(this.#socket, this.#times.lingerMs);
  }

  /**
   * The app's idle timeout, which node's server no longer applies to this socket: its timer is
   * pushed back by every byte read or written; when it runs out with nothing waiting to leave, the
   * socket is cut. Write stalls are cut by the app's stall watch, which has watched this socket
   * since it connected.
   */
  #watchQuiet(): void {
    const { idleMs } = this.#times;
    if (idleMs <= 0) return;
    const socket = this.#socket as Socket & { _handle?: { writeQueueSize?: number } | null };
    socket.setTimeout(idleMs);
    socket.on('timeout', () => {
      const waiting = socket.writableLength > 0 || (socket._handle?.writeQueueSize ?? 0) > 0;
      if (waiting) socket.setTimeout(idleMs);
      else socket.destroy();
    });
  }

  #onClose(): void {
    if (this.#bodyTimer !== null) clearTimeout(this.#bodyTimer);
    // The body stopped arriving: readers waiting for it fail (as node's server aborts a request).
    if (!this.#req.complete && !this.#req.destroyed)
      this.#req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
  }

  /** Ends a request whose body cannot be read: `status` when nothing was answered yet, else just the cut. */
  #cut(status: number, message: string): void {
    this.#bodyDone = true;
    this.#socket.off('data', this.#onData);
    if (this.#bodyTimer !== null) clearTimeout(this.#bodyTimer);
    if (this.res.headersSent || !this.#socket.writable) {
      this.#socket.destroy();
      return;
    }
    // Written before the handler's answer, as node writes a 400/408 it finds while reading: the
    // default shape, then the connection is closed (an answer the handler writes later is dropped).
    writeRawFailure(this.#socket, status, message, this.#times.early);
    linger(this.#socket, this.#times.lingerMs);
  }
}

/** Close to how node's parser frames a request body: null for none; a message for what it would refuse. */
function framingOf(req: IncomingMessage): Framing | null | string {
  const te = req.headers['transfer-encoding'];
  if (te !== undefined) {
    // node has already refused Transfer-Encoding beside Content-Length; the last coding must be chunked
    const codings = te.split(',');
    // Only SP and HTAB are whitespace here (RFC 9110 §5.6.3): trim() would take NBSP away too, and
    // `\xa0chunked` is a coding node's own parser does not take for chunked.
    return codings[codings.length - 1]!.replace(/^[ \t]+|[ \t]+$/g, '').toLowerCase() === 'chunked'
      ? CHUNKED
      : 'Transfer-Encoding must end with chunked';
  }
  const cl = req.headers['content-length'];
  if (cl === undefined) return null;
  if (!/^\d{1,15}$/.test(cl)) return 'bad Content-Length';
  return { length: Number(cl) };
}

/**
 * After our side has ended: what the client still sends is read and dropped until it closes its
 * side too (closing with unread bytes would reset the connection and could cost the client the
 * answer), for at most `ms`, then the socket is cut.
 */
function linger(socket: Socket, ms: number): void {
  if (socket.listenerCount('data') === 0) socket.on('data', noop);
  socket.resume();
  setTimeout(() => socket.destroy(), ms).unref();
}

function noop(): void {}
