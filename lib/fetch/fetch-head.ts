import type { Readable } from 'node:stream';
import type { CallGuard } from './call-guard';
import type { Engine } from './engine';
import { FetchError } from './errors';
import { headerOf, redirectHeaders } from './header-line';
import { Transfer, type TransferRequest } from './transfer';

/**
 * What a redirect does: `'refuse'` fails a 3xx with `Location` with `RedirectRefused`,
 * `'follow'` follows at most three hops, `'expose'` returns the 3xx itself.
 */
export type RedirectPolicy = 'refuse' | 'follow' | 'expose';

/** Hops a followed chain may take; the fourth is `TooManyRedirects`: a loop ends. */
export const MAX_REDIRECTS = 3;

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);

export interface HeadOptions {
  readonly redirects: RedirectPolicy;
  readonly stallMs: number;
  readonly highWaterMark: number;
  /** Header names (lowercase) dropped, besides the credentials every call drops, when a hop leaves the origin. */
  readonly secret?: ReadonlySet<string> | null | undefined;
}

export interface HeadResult {
  readonly transfer: Transfer;
  /** Where a followed chain ended, or null when nothing was followed. */
  readonly redirected: URL | null;
}

/** True when the answer names a content coding other than identity (RFC 9110 §8.4). */
function encoded(transfer: Transfer): string | null {
  const ce = headerOf(transfer.headers, 'content-encoding');
  if (ce === null) return null;
  for (const token of ce.split(',')) {
    const t = token.trim().toLowerCase();
    if (t !== '' && t !== 'identity') return ce;
  }
  return null;
}

/**
 * Sends `req` and waits for the head of the answer, applying the redirect policy. The bodies of
 * the 3xx answers on the way are drained (or their connections dropped) as `end()` would. The
 * final head is refused with `HttpContentEncodingUnsupported` when its body is encoded:
 * the client asked for identity and decodes nothing.
 */
export async function fetchHead(
  engine: Engine,
  guard: CallGuard,
  first: TransferRequest,
  opts: HeadOptions,
): Promise<HeadResult> {
  let req = first;
  let redirected: URL | null = null;
  const limits = { stallMs: opts.stallMs, highWaterMark: opts.highWaterMark };
  for (let hops = 0; ; hops++) {
    guard.beforeSend();
    const transfer = new Transfer(engine.dispatcher, req, limits, guard);
    await transfer.head;
    const location = REDIRECT_STATUS.has(transfer.status)
      ? headerOf(transfer.headers, 'location')
      : null;
    if (location !== null && opts.redirects !== 'expose') {
      const from = req.origin + req.path;
      await transfer.drain(engine.settings.maxDrain);
      if (opts.redirects === 'refuse') {
        throw new FetchError(
          'RedirectRefused',
          `${transfer.status} to ${location} while redirects are 'refuse'`,
        );
      }
      if (hops === MAX_REDIRECTS) {
        throw new FetchError(
          'TooManyRedirects',
          `more than ${MAX_REDIRECTS} redirects (the last to ${location})`,
        );
      }
      req = nextHop(req, transfer.status, new URL(location, from), opts.secret ?? null);
      redirected = new URL(req.origin + req.path);
      guard.throwIfAborted();
      continue;
    }
    const coding = transfer.bodyLength === 0 ? null : encoded(transfer);
    if (coding !== null) {
      const err = new FetchError(
        'HttpContentEncodingUnsupported',
        `the answer is encoded as ${coding}; identity was asked`,
      );
      transfer.abort(err);
      throw err;
    }
    return { transfer, redirected };
  }
}

/**
 * The request for the next hop (RFC 9110 §15.4): 303 — and 301/302 after a POST, as every
 * client does — become a GET without body; 307/308 resend method and body, which a stream
 * cannot do. Leaving the origin drops Authorization, Cookie, Proxy-Authorization, Host and the
 * `secret` lines (a target's standing headers): once dropped they stay dropped for the chain.
 */
function nextHop(
  req: TransferRequest,
  status: number,
  to: URL,
  secret: ReadonlySet<string> | null,
): TransferRequest {
  if (to.protocol !== 'http:' && to.protocol !== 'https:') {
    throw new FetchError('RedirectRefused', `redirect to a ${to.protocol} URL`);
  }
  const toGet =
    (status === 303 && req.method !== 'HEAD') ||
    ((status === 301 || status === 302) && req.method === 'POST');
  if (!toGet && req.body !== null && !Buffer.isBuffer(req.body)) {
    throw new FetchError(
      'RedirectRefused',
      `${status} asks to resend a stream body, which cannot be replayed`,
    );
  }
  const crossOrigin = to.origin !== req.origin;
  return {
    origin: to.origin,
    path: to.pathname + to.search,
    method: toGet ? 'GET' : req.method,
    headers: redirectHeaders(req.headers, { crossOrigin, dropBody: toGet, secret }),
    body: toGet ? null : (req.body as Buffer | Readable | null),
  };
}
