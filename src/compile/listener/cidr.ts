/**
 * CIDR ranges as Envoy compares them: `1.2.3.4/8` and `1.5.6.7/8` are the same range. Used to tell
 * whether two outbound filter chains match the same destinations (istiod's conflictsWith). Pure.
 */

/** The range with its host bits cleared, as `address/len` in a canonical spelling; the input when it does not parse. */
export function maskedCidr(cidr: string): string {
  const slash = cidr.indexOf('/');
  const address = slash < 0 ? cidr : cidr.slice(0, slash);
  const words = address.includes(':') ? ipv6Words(address) : ipv4Words(address);
  if (!words) return cidr;
  const bits = words.length * 16;
  const len = slash < 0 ? bits : Number(cidr.slice(slash + 1));
  if (!Number.isInteger(len) || len < 0 || len > bits) return cidr;
  const masked = words.map((w, i) => {
    const keep = Math.max(0, Math.min(16, len - i * 16));
    return keep === 0 ? 0 : w & (0xffff << (16 - keep)) & 0xffff;
  });
  return `${masked.map((w) => w.toString(16)).join(':')}/${len}`;
}

function ipv4Words(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  const [a, b, c, d] = parts.map(Number) as [number, number, number, number];
  return [(a << 8) | b, (c << 8) | d];
}

function ipv6Words(s: string): number[] | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string): number[] | undefined => {
    if (h === '') return [];
    const groups = h.split(':');
    if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
    return groups.map((g) => parseInt(g, 16));
  };
  const head = parse(halves[0] ?? '');
  const tail = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}
