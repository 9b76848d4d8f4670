import { connect, type Socket } from 'node:net';

// A WebSocket peer by hand, over a plain TCP socket: it can send frames no well-behaved client
// library would (unmasked, oversized, reserved bits), and it answers nothing on its own (no pongs).

export interface RawPeer {
  readonly socket: Socket;
  /** Frames the server sent, in order, as they arrive. */
  readonly frames: ServerFrame[];
  /** Resolves when the server sends a close frame (its code; 1005 when it carried none) or the socket closes without one (null). */
  readonly closed: Promise<number | null>;
  /** Resolves when the TCP socket has closed. */
  readonly gone: Promise<void>;
}

export interface ServerFrame {
  readonly opcode: number;
  readonly payload: Buffer;
}

/** Opens a real WebSocket handshake by hand; rejects unless the server answers 101. */
export function rawWebSocket(port: number, path: string, origin?: string): Promise<RawPeer> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {}); // a server cutting us is an outcome the tests read from `closed`
  const head =
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
    `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${origin ? `Origin: ${origin}\r\n` : ''}\r\n`;
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const frames: ServerFrame[] = [];
    let onClose!: (code: number | null) => void;
    const closed = new Promise<number | null>((r) => (onClose = r));
    const gone = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('close', () => onClose(null));
    let upgraded = false;
    socket.on('data', (d: Buffer) => {
      buffered = Buffer.concat([buffered, d]);
      if (!upgraded) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const status = buffered.subarray(0, end).toString('latin1').split(' ')[1];
        if (status !== '101') {
          socket.destroy();
          reject(new Error(`handshake answered ${status}: ${buffered.toString('latin1')}`));
          return;
        }
        upgraded = true;
        buffered = buffered.subarray(end + 4);
        resolve({ socket, frames, closed, gone });
      }
      for (;;) {
        const f = parseFrame(buffered);
        if (f === null) break;
        buffered = buffered.subarray(f.size);
        frames.push(f.frame);
        if (f.frame.opcode === 0x8)
          onClose(f.frame.payload.length >= 2 ? f.frame.payload.readUInt16BE(0) : 1005);
      }
    });
    socket.once('connect', () => socket.write(head));
    socket.once('close', () => reject(new Error('closed before the handshake')));
  });
}

/** One server frame (unmasked, as servers send them) from the front of `b`, or null when it is not all here. */
function parseFrame(b: Buffer): { frame: ServerFrame; size: number } | null {
  if (b.length < 2) return null;
  let len = b[1] & 0x7f;
  let at = 2;
  if (len === 126) {
    if (b.length < 4) return null;
    len = b.readUInt16BE(2);
    at = 4;
  } else if (len === 127) {
    if (b.length < 10) return null;
    len = Number(b.readBigUInt64BE(2));
    at = 10;
  }
  if (b.length < at + len) return null;
  return {
    frame: { opcode: b[0] & 0x0f, payload: Buffer.from(b.subarray(at, at + len)) },
    size: at + len,
  };
}

export interface FrameSpec {
  readonly opcode: number;
  readonly payload?: Buffer | string;
  readonly fin?: boolean;
  /** The three reserved bits, as a number 0..7 (RSV1 = 4). */
  readonly rsv?: number;
  /** False sends the frame unmasked (a protocol error from a client). */
  readonly mask?: boolean;
  /** The payload length to declare, when it is to differ from the payload sent. */
  readonly declaredLength?: number;
}

/** A client frame, built byte by byte (masked with a fixed key unless told otherwise). */
export function frame(spec: FrameSpec): Buffer {
  const payload =
    typeof spec.payload === 'string'
      ? Buffer.from(spec.payload)
      : (spec.payload ?? Buffer.alloc(0));
  const length = spec.declaredLength ?? payload.length;
  const mask = spec.mask !== false;
  const first = ((spec.fin === false ? 0 : 1) << 7) | ((spec.rsv ?? 0) << 4) | spec.opcode;
  let head: Buffer;
  if (length < 126) head = Buffer.from([first, (mask ? 0x80 : 0) | length]);
  else if (length < 0x10000) {
    head = Buffer.alloc(4);
    head[0] = first;
    head[1] = (mask ? 0x80 : 0) | 126;
    head.writeUInt16BE(length, 2);
  } else {
    head = Buffer.alloc(10);
    head[0] = first;
    head[1] = (mask ? 0x80 : 0) | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  if (!mask) return Buffer.concat([head, payload]);
  const key = Buffer.from([0x12, 0x34, 0x56, 0x78]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ key[i % 4]));
  return Buffer.concat([head, key, masked]);
}

/** A close frame's payload: the code, then the reason. */
export const closePayload = (code: number, reason = ''): Buffer => {
  const b = Buffer.alloc(2 + Buffer.byteLength(reason));
  b.writeUInt16BE(code, 0);
  b.write(reason, 2);
  return b;
};
