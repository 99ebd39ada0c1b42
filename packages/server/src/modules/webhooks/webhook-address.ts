import { isIPv4, isIPv6 } from 'node:net';

/** [first address as a number, prefix length, what the range is] */
type V4Range = readonly [number, number, string];

const v4 = (a: string): number => a.split('.').reduce((n, part) => n * 256 + Number(part), 0);

const V4_RANGES: readonly V4Range[] = [
  [v4('0.0.0.0'), 8, 'the "this network" range (0.0.0.0/8)'],
  [v4('10.0.0.0'), 8, 'a private address (10.0.0.0/8)'],
  [v4('100.64.0.0'), 10, 'a shared (carrier-grade NAT) address (100.64.0.0/10)'],
  [v4('127.0.0.0'), 8, 'a loopback address (127.0.0.0/8)'],
  [v4('169.254.0.0'), 16, 'a link-local address (169.254.0.0/16)'],
  [v4('172.16.0.0'), 12, 'a private address (172.16.0.0/12)'],
  [v4('192.0.0.0'), 24, 'an IETF protocol address (192.0.0.0/24)'],
  [v4('192.168.0.0'), 16, 'a private address (192.168.0.0/16)'],
  [v4('198.18.0.0'), 15, 'a benchmarking address (198.18.0.0/15)'],
  [v4('224.0.0.0'), 4, 'a multicast address (224.0.0.0/4)'],
  [v4('240.0.0.0'), 4, 'a reserved address (240.0.0.0/4)'],
];

function classifyV4(n: number): string | null {
  for (const [base, bits, what] of V4_RANGES) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return what;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included); undefined if it is not one. */
function groupsOf(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    if (!isIPv4(quad[1]!)) return undefined;
    const n = v4(quad[1]!);
    text = `${text.slice(0, quad.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const head = parse(halves[0]!);
  const tail = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 0) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const embeddedV4 = (hi: number, lo: number) => hi * 65536 + lo;

function classifyV6(g: number[]): string | null {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'the unspecified address (::)';
  if (zeroUpTo(7) && g[7] === 1) return 'the loopback address (::1)';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): the IPv4 address is what is reached.
  if (zeroUpTo(5) && g[5] === 0xffff) return inV4('IPv4-mapped', embeddedV4(g[6]!, g[7]!));
  if (zeroUpTo(6)) return inV4('IPv4-compatible', embeddedV4(g[6]!, g[7]!));
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach the IPv4 address inside them.
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return inV4('NAT64', embeddedV4(g[6]!, g[7]!));
  if (g[0] === 0x2002) return inV4('6to4', embeddedV4(g[1]!, g[2]!));
  if ((g[0]! & 0xfe00) === 0xfc00) return 'a unique-local address (fc00::/7)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'a site-local address (fec0::/10)';
  if ((g[0]! & 0xff00) === 0xff00) return 'a multicast address (ff00::/8)';
  if (g[0] === 0x100 && zeroUpTo(4)) return 'a discard-only address (100::/64)';
  return null;
}

function inV4(kind: string, n: number): string | null {
  const what = classifyV4(n);
  return what && `${kind} ${what}`;
}

/**
 * Why an IP address may not receive webhooks (loopback, private, link-local, unique-local, shared, multicast,
 * reserved, or an IPv6 form of one of those), or null for a public unicast address. A string that is not an IP
 * address is refused too (the caller resolves names first).
 */
export function privateAddressReason(address: string): string | null {
  if (isIPv4(address)) return classifyV4(v4(address));
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!isIPv6(bare)) return 'not an IP address';
  const groups = groupsOf(bare);
  return groups ? classifyV6(groups) : 'not an IP address';
}

/**
 * Why a URL's host may not receive webhooks, judged without resolving it: `localhost` and names under it, and
 * IP literals of the ranges above. Other names are judged when a delivery resolves them (webhook-sender.ts).
 */
export function privateHostReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'localhost is a loopback name';
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIPv4(bare) || isIPv6(bare)) return privateAddressReason(bare);
  return null;
}
