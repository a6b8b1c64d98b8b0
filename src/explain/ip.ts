/** IPv4/IPv6 addresses and CIDR ranges (Envoy's `CidrRange`), without Node's `net`. Pure. */
import { num, str, type JsonObject } from './json.js';

export interface ParsedIp {
  readonly bits: 32 | 128;
  readonly value: bigint;
}

function parseIpv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseIpv6(s: string): bigint | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string): string[] | undefined => {
    if (h === '') return [];
    const out: string[] = [];
    for (const g of h.split(':')) {
      if (g.includes('.')) {
        const v4 = parseIpv4(g);
        if (v4 === undefined) return undefined;
        out.push(((v4 >> 16n) & 0xffffn).toString(16), (v4 & 0xffffn).toString(16));
      } else if (/^[0-9a-fA-F]{1,4}$/.test(g)) out.push(g);
      else return undefined;
    }
    return out;
  };
  const head = groups(halves[0] as string);
  const tail = halves.length === 2 ? groups(halves[1] as string) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return undefined;
  let v = 0n;
  for (const g of [...head, ...Array<string>(missing).fill('0'), ...tail]) v = (v << 16n) | BigInt(parseInt(g, 16));
  return v;
}

export function parseIp(s: string): ParsedIp | undefined {
  const v4 = parseIpv4(s);
  if (v4 !== undefined) return { bits: 32, value: v4 };
  const v6 = s.includes(':') ? parseIpv6(s.replace(/^\[|\]$/g, '')) : undefined;
  return v6 === undefined ? undefined : { bits: 128, value: v6 };
}

export const isIp = (s: string): boolean => parseIp(s) !== undefined;

/** The prefix length of the CIDR range that contains `ip`, or undefined when it does not. */
export function cidrMatchLength(range: JsonObject, ip: ParsedIp): number | undefined {
  const base = parseIp(str(range.address_prefix) ?? '');
  if (!base || base.bits !== ip.bits) return undefined;
  const len = num(range.prefix_len) ?? base.bits;
  const shift = BigInt(base.bits - Math.min(len, base.bits));
  return base.value >> shift === ip.value >> shift ? len : undefined;
}

export const isLoopback = (ip: ParsedIp): boolean => (ip.bits === 32 ? ip.value >> 24n === 127n : ip.value === 1n);

/** The wildcard addresses a listener binds to every local address with. */
export const isWildcardAddress = (s: string): boolean => s === '0.0.0.0' || s === '::' || s === '[::]';
