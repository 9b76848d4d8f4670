import { request, type IncomingHttpHeaders } from 'node:http';

/** What a test reads of an answer: status, headers (lower-cased names) and body text. */
export interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface SendOptions {
  /** Default 'POST'. */
  readonly method?: string;
  /** The source address (all of 127.0.0.0/8 is loopback on Linux). Default: the system's choice. */
  readonly localAddress?: string;
  readonly headers?: Record<string, string>;
  /** Rejects with 'no answer' when the server is silent this long. Default 5000. */
  readonly timeoutMs?: number;
}

/** One request to 127.0.0.1 over a connection of its own (no agent, no keep-alive). */
export function send(port: number, path: string, options: SendOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'POST',
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        ...(options.headers === undefined ? {} : { headers: options.headers }),
        agent: false,
        timeout: options.timeoutMs ?? 5_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', reject);
    req.end();
  });
}

/** What a rate-limit test reads of an answer. */
export interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** A bodiless POST from a chosen loopback source address. */
export async function post(
  port: number,
  path: string,
  localAddress = '127.0.0.1',
): Promise<Answer> {
  const { status, headers, body } = await send(port, path, { localAddress });
  return { status, retryAfter: headers['retry-after'], body };
}
