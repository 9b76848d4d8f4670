import { FetchError } from './errors';

/** One header line, as written or as received. */
export interface HeaderLine {
  readonly name: string;
  readonly value: string;
}

// RFC 9110 §5.6.2 token; §5.5 field values: no CR, LF, NUL or other control byte (HTAB allowed).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** Throws `BadHeader` naming the header before anything is sent (header injection stops here). */
export function checkHeader(name: string, value: string): void {
  if (typeof name !== 'string' || !TOKEN.test(name)) {
    throw new FetchError('BadHeader', `header name ${JSON.stringify(name)} is not an HTTP token`);
  }
  if (typeof value !== 'string' || BAD_VALUE.test(value)) {
    throw new FetchError(
      'BadHeader',
      `header ${name}: value holds a control byte (CR, LF, NUL, …) or is not text`,
    );
  }
}

/**
 * The headers the client has a slot of its own for: a call's line for one of them is sent once,
 * with the call's value.
 */
export const SLOT_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'authorization',
  'user-agent',
  'content-type',
  'connection',
  'accept-encoding',
]);

/**
 * Dropped when a followed redirect leaves the origin (as undici and browsers do). `host` too: it
 * named the old origin.
 */
const CROSS_ORIGIN_DROPPED: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'proxy-authorization',
  'host',
]);

/** Dropped when a redirect turns the request into a GET without body. */
const BODY_HEADERS: ReadonlySet<string> = new Set(['content-type', 'content-length']);

export interface CallHeaderPlan {
  /** The call's own lines, in order. */
  readonly call: readonly HeaderLine[] | undefined;
  /** A target's standing lines; a call line of the same name shadows them. */
  readonly standing?: readonly HeaderLine[] | undefined;
  /** Slot defaults, used when no line names the slot. */
  readonly authorization?: string | null | undefined;
  readonly userAgent?: string | null | undefined;
  readonly contentType?: string | null | undefined;
  /** The scope's id, sent as `X-Request-Id` unless a line names one, so a request can be traced. */
  readonly requestId: string | null;
}

function has(lines: readonly HeaderLine[], lower: string): boolean {
  for (const l of lines) if (l.name.toLowerCase() === lower) return true;
  return false;
}

/**
 * The header block of a `Call` (client and target calls), flat for undici: standing lines not
 * shadowed by a call line, then the call's lines in their order — where a slot header appears
 * more than once the last line wins and it is written once — then the slot defaults nobody named,
 * `Accept-Encoding: identity` among them (the client decodes nothing), then `X-Request-Id`.
 */
export function callHeaders(plan: CallHeaderPlan): string[] {
  const call = plan.call ?? [];
  const standing = plan.standing ?? [];
  let lines: readonly HeaderLine[] = call;
  if (standing.length) {
    const shadowed = new Set(call.map((l) => l.name.toLowerCase()));
    lines = [...standing.filter((l) => !shadowed.has(l.name.toLowerCase())), ...call];
  }
  const out: string[] = [];
  const lastSlot = new Map<string, number>();
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    checkHeader(l.name, l.value);
    const lower = l.name.toLowerCase();
    if (SLOT_HEADERS.has(lower)) lastSlot.set(lower, i);
  }
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const lower = l.name.toLowerCase();
    if (SLOT_HEADERS.has(lower) && lastSlot.get(lower) !== i) continue;
    out.push(l.name, l.value);
  }
  if (plan.authorization != null && !lastSlot.has('authorization'))
    out.push('authorization', plan.authorization);
  if (plan.userAgent != null && !lastSlot.has('user-agent')) out.push('user-agent', plan.userAgent);
  if (plan.contentType != null && !lastSlot.has('content-type'))
    out.push('content-type', plan.contentType);
  if (!lastSlot.has('accept-encoding')) out.push('accept-encoding', 'identity');
  if (plan.requestId != null && !has(lines, 'x-request-id')) {
    checkHeader('x-request-id', plan.requestId);
    out.push('x-request-id', plan.requestId);
  }
  return out;
}

export interface ExchangeHeaderPlan {
  readonly headers: readonly HeaderLine[] | undefined;
  readonly host?: string | null | undefined;
  readonly authorization?: string | null | undefined;
  readonly contentType?: string | null | undefined;
  readonly userAgent?: string | null | undefined;
  readonly contentLength: number | null;
  readonly requestId: string | null;
}

/**
 * The header block of an `Exchange`: each explicit field and every line of `headers` is written,
 * so a field and a line of the same name give two lines. `host` is the one
 * exception: HTTP allows one Host line (RFC 9112 §3.2) and undici writes exactly one, so giving it
 * both ways is refused.
 */
export function exchangeHeaders(plan: ExchangeHeaderPlan): string[] {
  const lines = plan.headers ?? [];
  const out: string[] = [];
  if (plan.host != null) {
    checkHeader('host', plan.host);
    if (has(lines, 'host'))
      throw new FetchError(
        'BadHeader',
        'host given both as the host field and as a header line; HTTP allows one',
      );
    out.push('host', plan.host);
  }
  if (plan.authorization != null) out.push('authorization', plan.authorization);
  if (plan.userAgent != null) out.push('user-agent', plan.userAgent);
  if (plan.contentType != null) out.push('content-type', plan.contentType);
  for (let i = 0; i < out.length; i += 2) checkHeader(out[i]!, out[i + 1]!);
  for (const l of lines) {
    checkHeader(l.name, l.value);
    out.push(l.name, l.value);
  }
  if (plan.contentLength !== null) out.push('content-length', String(plan.contentLength));
  if (!has(lines, 'accept-encoding')) out.push('accept-encoding', 'identity');
  if (plan.requestId != null && !has(lines, 'x-request-id')) {
    checkHeader('x-request-id', plan.requestId);
    out.push('x-request-id', plan.requestId);
  }
  return out;
}

/**
 * The header block for the next hop of a followed redirect. `secret` names more lines to drop
 * across origins, lowercase: a target's standing headers, where API keys live.
 */
export function redirectHeaders(
  flat: readonly string[],
  opts: { crossOrigin: boolean; dropBody: boolean; secret?: ReadonlySet<string> | null },
): string[] {
  if (!opts.crossOrigin && !opts.dropBody) return flat as string[];
  const secret = opts.secret;
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const lower = flat[i]!.toLowerCase();
    if (
      opts.crossOrigin &&
      (CROSS_ORIGIN_DROPPED.has(lower) || (secret != null && secret.has(lower)))
    )
      continue;
    if (opts.dropBody && BODY_HEADERS.has(lower)) continue;
    out.push(flat[i]!, flat[i + 1]!);
  }
  return out;
}

/** Received raw header buffers → lines in wire order. Header bytes are read as latin1, as Node does. */
export function linesOf(raw: readonly Buffer[]): HeaderLine[] {
  const out: HeaderLine[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    out.push({ name: raw[i]!.toString('latin1'), value: raw[i + 1]!.toString('latin1') });
  return out;
}

/** Case-insensitive lookup in undici's parsed header object; repeated lines are joined with ", ". */
export function headerOf(
  parsed: Record<string, string | string[] | undefined>,
  name: string,
): string | null {
  const key = name.toLowerCase();
  // undici's object has a prototype: `constructor` must not be found there.
  if (!Object.hasOwn(parsed, key)) return null;
  const v = parsed[key];
  if (v === undefined) return null;
  return typeof v === 'string' ? v : v.join(', ');
}
