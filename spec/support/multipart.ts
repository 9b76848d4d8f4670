import { request } from 'node:http';
import { readdirSync } from 'node:fs';

/** One part of a multipart body: a field (`value`) or a file (`data`, with a file name). */
export interface Part {
  readonly name: string;
  readonly value?: string;
  readonly filename?: string;
  readonly type?: string;
  readonly data?: Buffer | string;
  /** Extra header lines of the part. */
  readonly extra?: string;
}

/** A multipart/form-data body built by hand, so the test says every byte. */
export function multipart(
  parts: readonly Part[],
  boundary = 'fw-test-boundary',
): {
  body: Buffer;
  type: string;
} {
  const out: Buffer[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.type !== undefined) head += `Content-Type: ${p.type}\r\n`;
    if (p.extra !== undefined) head += p.extra;
    out.push(Buffer.from(head + '\r\n'));
    out.push(Buffer.from(p.data ?? p.value ?? ''));
    out.push(Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(out), type: `multipart/form-data; boundary=${boundary}` };
}

export interface Sent {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

/**
 * POSTs `body` over a real socket and resolves with the answer, even when the server answers
 * (and closes) before the body is all sent: write errors after the answer are the expected end.
 */
export function post(
  port: number,
  path: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers:
          headers['transfer-encoding'] === undefined
            ? { 'content-length': String(body.length), ...headers }
            : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    // In pieces, as a client streams it: the server may answer before the last one.
    const piece = 64 * 1024;
    let at = 0;
    const more = (): void => {
      while (at < body.length) {
        const ok = req.write(body.subarray(at, at + piece));
        at += piece;
        if (!ok) return void req.once('drain', more);
      }
      req.end();
    };
    more();
  });
}

/** Waits until `dir` holds no file (temp files are removed as the request ends), up to `ms`. */
export async function emptied(dir: string, ms = 5000): Promise<string[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = readdirSync(dir);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 20));
  }
}
