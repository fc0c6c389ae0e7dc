/**
 * SSRF guard for deliveries. Addresses are checked where the socket is opened (undici's connect
 * `lookup`), so a name that resolves to a public address when saved and to 127.0.0.1 later (DNS
 * rebinding) is still refused. Literal IPs never reach `lookup`, so they are checked before sending.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';

type Bytes = number[];

function parseV4(s: string): Bytes | null {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.map(Number);
}

function parseV6(s: string): Bytes | null {
  s = s.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  let tail: Bytes = [];
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseV4(s.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const group = (h: string) => (h === '' ? [] : h.split(':'));
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...Array(missing).fill('0'), ...rest];
  const bytes: Bytes = [];
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const v = parseInt(g, 16);
    bytes.push(v >> 8, v & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

const V4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const V6_BLOCKED: [string, number][] = [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
];

function inPrefix(addr: Bytes, net: Bytes, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const mask = 0x80 >> (i & 7);
    if ((addr[byte]! & mask) !== (net[byte]! & mask)) return false;
  }
  return true;
}

/** True when the address is private, loopback, link-local, reserved or otherwise not a public host. */
export function isBlockedAddress(address: string): boolean {
  const v4 = parseV4(address);
  if (v4) return V4_BLOCKED.some(([n, b]) => inPrefix(v4, parseV4(n)!, b));
  const v6 = parseV6(address);
  if (!v6) return true; // unparseable: refuse rather than guess
  // IPv4 embedded in IPv6 (mapped, NAT64, 6to4): unwrap and check the IPv4 address too.
  const zero = (from: number, to: number) => v6.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && v6[10] === 0xff && v6[11] === 0xff) return isBlockedAddress(v6.slice(12).join('.'));
  if (inPrefix(v6, parseV6('64:ff9b::')!, 96)) return isBlockedAddress(v6.slice(12).join('.'));
  if (v6[0] === 0x20 && v6[1] === 0x02) return isBlockedAddress(v6.slice(2, 6).join('.'));
  if (zero(0, 12) && !zero(12, 16)) return isBlockedAddress(v6.slice(12).join('.')); // IPv4-compatible
  return V6_BLOCKED.some(([n, b]) => inPrefix(v6, parseV6(n)!, b));
}

export class BlockedAddressError extends Error {
  readonly code = 'E_RUNLENS_BLOCKED_ADDRESS';
  constructor(host: string, address: string) {
    super(`refused to connect to ${host} (${address}): private, loopback or link-local address; start serve with --allow-private-targets to allow it`);
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
