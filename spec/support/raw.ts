import { connect, type Socket } from 'node:net';

/** A raw HTTP/1.x exchange over a real socket: send bytes, read what the server wrote until it closes or goes quiet. */
export async function raw(
  port: number,
  request: string | Buffer,
  options: { quietMs?: number; keepOpen?: boolean } = {},
): Promise<{ text: string; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) =>
    socket.once('connect', resolve).once('error', reject),
  );
  return exchange(socket, request, options);
}

export function exchange(
  socket: Socket,
  request: string | Buffer,
  options: { quietMs?: number; keepOpen?: boolean } = {},
): Promise<{ text: string; closed: boolean }> {
  const quiet = options.quietMs ?? 300;
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout;
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (!options.keepOpen && !closed) socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(false), quiet);
    };
    const onData = (d: Buffer) => {
      chunks.push(d);
      arm();
    };
    const onClose = () => done(true);
    socket.on('data', onData);
    socket.on('close', onClose);
    arm();
    socket.write(request);
  });
}

/** Splits raw response text into responses: status, lower-cased headers, body. */
export function parseResponses(
  text: string,
): { status: number; headers: Record<string, string>; body: string }[] {
  const out: { status: number; headers: Record<string, string>; body: string }[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/')) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end).split('\r\n');
    const status = Number(head[0].split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      const k = line.slice(0, i).toLowerCase();
      headers[k] =
        headers[k] !== undefined
          ? headers[k] + ', ' + line.slice(i + 1).trim()
          : line.slice(i + 1).trim();
    }
    rest = rest.slice(end + 4);
    let body = '';
    if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      body = rest.slice(0, n);
      rest = rest.slice(n);
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        const nl = rest.indexOf('\r\n');
        const size = parseInt(rest.slice(0, nl), 16);
        rest = rest.slice(nl + 2);
        if (size === 0) {
          rest = rest.slice(2);
          break;
        }
        body += rest.slice(0, size);
        rest = rest.slice(size + 2);
      }
    }
    out.push({ status, headers, body });
  }
  return out;
}
