import { checkWhole } from '../../options';
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/**
 * Which proxies in front of the app are trusted to say who the client is (Express's and Fastify's
 * `trustProxy`): `true` (every hop), a hop count, addresses and CIDR ranges (or the names
 * `loopback`, `linklocal`, `uniquelocal`), or a function of an address and its hop (0 is the peer).
 * @example new App({ trustProxy: 1 }) · new App({ trustProxy: ['10.0.0.0/8', 'loopback'] })
 */
export type TrustProxySetting =
  boolean | number | string | readonly string[] | ((address: string, hop: number) => boolean);

/** The client as the trusted hops describe it. */
export interface ClientFacts {
  readonly ip: string;
  readonly protocol: 'http' | 'https';
  /** The host the client asked for (`Host`, or the trusted `X-Forwarded-Host`/`host=`), or ''. */
  readonly host: string;
}

const NAMED: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** `::ffff:10.0.0.1` → `10.0.0.1`, so one IPv4 range covers both spellings. */
const plain = (address: string): string =>
  address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;

/** Compiles the setting once, at build: a test of one address at one hop. Throws naming a bad entry. */
export function compileTrust(
  setting: TrustProxySetting,
): (address: string, hop: number) => boolean {
  if (typeof setting === 'function') return (a, hop) => setting(a, hop);
  if (setting === true) return () => true;
  if (setting === false) return () => false;
  if (typeof setting === 'number') {
    checkWhole({ where: 'trustProxy' }, 'a hop count', setting, { min: 0 });
    return (_a, hop) => hop < setting;
  }
  const list = new BlockList();
  const entries = typeof setting === 'string' ? setting.split(',') : setting;
  for (const raw of entries.flatMap((e) => NAMED[e.trim()] ?? [e.trim()])) {
    const [address, bits] = raw.split('/');
    const family = isIP(address ?? '');
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (
      family === 0 ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > (family === 6 ? 128 : 32)
    )
      throw new TypeError(`trustProxy: ${JSON.stringify(raw)} is not an address or CIDR range`);
    list.addSubnet(address!, prefix, family === 6 ? 'ipv6' : 'ipv4');
  }
  return (a) => {
    const p = plain(a);
    const family = isIP(p);
    return family !== 0 && list.check(p, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/** One element of `Forwarded` (RFC 7239 §4), the parameters fw reads. */
interface Hop {
  readonly for?: string;
  readonly proto?: string;
  readonly host?: string;
}

/** `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"` → its elements, left to right. */
export function parseForwarded(header: string): Hop[] {
  return header.split(',').map((element) => {
    const hop: Record<string, string> = {};
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1) continue;
      const key = pair.slice(0, eq).trim().toLowerCase();
      let value = pair.slice(eq + 1).trim();
      if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
      if (key === 'for' || key === 'proto' || key === 'host') hop[key] = value;
    }
    return hop;
  });
}

/** `192.0.2.43:47011` → `192.0.2.43`; `[2001:db8::1]:4711` → `2001:db8::1`; other tokens as they are. */
export function nodeAddress(value: string): string {
  const v = value.trim();
  if (v.startsWith('[')) return v.slice(1, v.indexOf(']') === -1 ? undefined : v.indexOf(']'));
  const colon = v.indexOf(':');
  return colon !== -1 && v.indexOf(':', colon + 1) === -1 ? v.slice(0, colon) : v;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/**
 * The client of a request: walking the forwarded addresses from the peer outwards while each hop
 * is trusted, so an untrusted peer's `X-Forwarded-For` is never read. `Forwarded` wins over the
 * `X-Forwarded-*` headers when both are sent. Protocol and host come from the nearest trusted hop.
 */
export function clientOf(
  req: IncomingMessage,
  trusted: ((address: string, hop: number) => boolean) | null,
): ClientFacts {
  const socket = req.socket as (IncomingMessage['socket'] & { encrypted?: boolean }) | undefined;
  const peer = plain(socket?.remoteAddress ?? '');
  const own: ClientFacts = {
    ip: peer,
    protocol: socket?.encrypted === true ? 'https' : 'http',
    host: header(req, 'host') ?? '',
  };
  if (trusted === null || !trusted(peer, 0)) return own;
  const forwarded = header(req, 'forwarded');
  const hops: Hop[] =
    forwarded !== undefined
      ? parseForwarded(forwarded)
      : (header(req, 'x-forwarded-for') ?? '')
          .split(',')
          .filter((s) => s.trim() !== '')
          .map((s) => ({ for: s.trim() }));
  let ip = peer;
  let at = hops.length - 1;
  for (let hop = 1; at >= 0; at--, hop++) {
    const address = plain(nodeAddress(hops[at]!.for ?? ''));
    ip = address;
    if (!trusted(address, hop)) break;
  }
  const nearest = forwarded !== undefined ? hops[hops.length - 1] : undefined;
  const proto = (nearest?.proto ?? header(req, 'x-forwarded-proto')?.split(',')[0])
    ?.trim()
    .toLowerCase();
  const host = (nearest?.host ?? header(req, 'x-forwarded-host')?.split(',')[0])?.trim();
  return {
    ip: ip === '' ? peer : ip,
    protocol: proto === 'https' || proto === 'http' ? proto : own.protocol,
    host: host !== undefined && host !== '' ? host : own.host,
  };
}
