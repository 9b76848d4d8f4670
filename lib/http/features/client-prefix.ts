import { isIP } from 'node:net';

/** The IPv6 prefix length `@RateLimit` counts one client by, unless `ipv6PrefixBits` says otherwise. */
export const RATE_IPV6_PREFIX_BITS = 64;

/**
 * The key a rate limit counts a client under: an IPv4 address as it is (also when it arrives
 * spelled as IPv4-mapped IPv6, `::ffff:192.0.2.1` or `::ffff:c000:201`); an IPv6 address as its
 * first `bits` bits (`2001:db8:0:7/64`), because one host is routinely handed a whole /64 (RFC
 * 4291 §2.5.4, SLAAC) and could otherwise count as 2^64 clients; anything else (a name a trusted
 * proxy forwarded, '') as it is.
 */
export function clientPrefix(address: string, bits: number): string {
  if (!address.includes(':')) return address;
  const zone = address.indexOf('%');
  const bare = zone === -1 ? address : address.slice(0, zone);
  if (isIP(bare) !== 6) return address;
  const groups = groupsOf(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  const whole = bits >> 4;
  const kept = groups.slice(0, whole);
  const rest = bits & 15;
  if (rest !== 0) kept.push(groups[whole]! & ((0xffff << (16 - rest)) & 0xffff));
  return `${kept.map((g) => g.toString(16)).join(':')}/${bits}`;
}

/** The eight 16-bit groups of an address `isIP` calls IPv6 (`::` filled, a dotted tail split in two). */
function groupsOf(address: string): number[] {
  const gap = address.indexOf('::');
  const head = gap === -1 ? address : address.slice(0, gap);
  const tail = gap === -1 ? '' : address.slice(gap + 2);
  const left = numbers(head);
  const right = numbers(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function numbers(part: string): number[] {
  if (part === '') return [];
  return part.split(':').flatMap((p) => {
    if (!p.includes('.')) return [parseInt(p, 16)];
    const [a, b, c, d] = p.split('.').map(Number) as [number, number, number, number];
    return [(a << 8) | b, (c << 8) | d];
  });
}
