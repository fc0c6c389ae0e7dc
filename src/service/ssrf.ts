/**
 * SSRF guard for deliveries. Addresses are classified by ipaddr.js, whose range names follow the IANA
 * special-purpose address registries: only ordinary unicast is a target, and IPv4 carried inside IPv6
 * (mapped, translated, NAT64, 6to4) is unwrapped and judged as IPv4. Addresses are checked where the
 * socket is opened (undici's connect `lookup`), so a name that resolves to a public address when saved
 * and to 127.0.0.1 later (DNS rebinding) is still refused. Literal IPs never reach `lookup`, so they are
 * checked before sending; `targetRefusal` checks a client_url when it is saved, so a user learns at once.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

const NAT64 = ipaddr.IPv6.parse('64:ff9b::');
const GLOBAL_UNICAST = ipaddr.IPv6.parse('2000::');

/**
 * Canonical text of an address: brackets and zone id dropped; IPv6 through the WHATWG URL parser, which
 * writes embedded dotted quads as hex (ipaddr.js would read `::1.2.3.4` as `::ffff:1.2.3.4`).
 */
function canonical(address: string): string | null {
  const a = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!a.includes(':')) return a;
  try {
    return new URL(`http://[${a}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

/**
 * The name of the special-purpose range that makes an address no delivery target (for an embedded
 * IPv4, "<form> of <its range>"), or null for an ordinary public unicast address.
 */
export function blockedRange(address: string): string | null {
  const text = canonical(address);
  if (text === null || !ipaddr.isValid(text)) return 'not an IP address';
  const ip = ipaddr.parse(text);
  if (ip.kind() === 'ipv4') {
    const range = (ip as ipaddr.IPv4).range();
    return range === 'unicast' ? null : range;
  }
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  const embedded = embeddedIPv4(v6, range);
  if (embedded) {
    const inner = blockedRange(embedded.toString());
    return inner === null ? null : `${range} of ${inner}`;
  }
  if (range !== 'unicast') return range;
  const [first] = v6.parts;
  if (first === 0) return 'ipv4Compatible'; // ::a.b.c.d and the rest of ::/8 (IETF reserved)
  if (!v6.match(GLOBAL_UNICAST, 3)) return 'outside global unicast (2000::/3)';
  return null;
}

/** The IPv4 address an IPv6 form carries, where the whole range is a way of reaching IPv4 hosts. */
function embeddedIPv4(v6: ipaddr.IPv6, range: string): ipaddr.IPv4 | null {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6]!, p[7]!);
  // 64:ff9b::/96 carries the IPv4 in its last 32 bits; the local-use 64:ff9b:1::/48 stays refused.
  if (range === 'rfc6052' && v6.match(NAT64, 96)) return v4(p[6]!, p[7]!);
  if (range === '6to4') return v4(p[1]!, p[2]!);
  return null;
}

/** True when the address is private, loopback, link-local, reserved or otherwise not a public host. */
export const isBlockedAddress = (address: string): boolean => blockedRange(address) !== null;

export class BlockedAddressError extends Error {
  readonly code = 'E_RUNLENS_BLOCKED_ADDRESS';
  constructor(host: string, address: string) {
    super(`refused to connect to ${host} (${address}, ${blockedRange(address)}): private, loopback or link-local address; start serve with --allow-private-targets to allow it`);
  }
}

/** Checks a URL's literal IP host (if any) before connecting; names are checked by `guardedLookup`. */
export function checkLiteralHost(url: URL, allowPrivate: boolean): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && isBlockedAddress(host)) throw new BlockedAddressError(host, host);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves the name and refuses if any resolved address is blocked. */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions | number, callback: LookupCallback): void => {
    const opts = typeof options === 'number' ? { family: options } : options;
    dnsLookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const bad = allowPrivate ? undefined : list.find((a) => isBlockedAddress(a.address));
      if (bad) return callback(Object.assign(new BlockedAddressError(hostname, bad.address), { errno: 0 }) as NodeJS.ErrnoException, []);
      if ((opts as LookupAllOptions).all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** Resolves a host name to its addresses (the system resolver by default; tests inject their own). */
export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) => (await dnsLookupAll(host, { all: true })).map((a) => a.address);

/**
 * Why a client_url may not be saved (null when it may): a literal private address, a `localhost`
 * name, or a name that resolves to a private address now. A name that does not resolve within
 * `timeoutMs` is accepted: every connection is checked again when it opens.
 */
export async function targetRefusal(url: string, resolve: HostResolver, timeoutMs = 3000): Promise<string | null> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (isIP(host)) {
    const range = blockedRange(host);
    return range === null ? null : `${host} is a ${range} address`;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} names this machine (loopback)`;
  let addresses: string[];
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      resolve(host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
  const bad = addresses.find(isBlockedAddress);
  return bad === undefined ? null : `${host} resolves to ${bad}, a ${blockedRange(bad)} address`;
}
