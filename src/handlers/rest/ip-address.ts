import { isIP, isIPv4 } from 'node:net';

/**
 * IP literal helpers for the SSRF policy. Parsing of odd IPv4 spellings (`127.1`, `0x7f.0.0.1`,
 * `2130706433`) is left to the WHATWG URL parser, which normalises them to dotted quads before
 * anything here sees them; these functions only ever see canonical text from `URL` or DNS.
 */

/** Strip `[...]` around an IPv6 URL host and any `%zone` suffix; other text is returned as is. */
export function unbracket(host: string): string {
  let h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const zone = h.indexOf('%');
  if (zone !== -1 && isIP(h.slice(0, zone)) === 6) h = h.slice(0, zone);
  return h;
}

/** The eight 16-bit groups of an IPv6 address (with an optional dotted IPv4 tail), or undefined. */
export function parseIPv6(text: string): number[] | undefined {
  const ip = unbracket(text);
  if (isIP(ip) !== 6) return undefined;
  let text6 = ip;
  const lastColon = ip.lastIndexOf(':');
  const last = ip.slice(lastColon + 1);
  if (isIPv4(last)) {
    // rewrite a dotted tail (`::ffff:1.2.3.4`) as two hex groups so that one parser handles all forms
    const q = last.split('.').map(Number) as [number, number, number, number];
    text6 = `${ip.slice(0, lastColon + 1)}${((q[0] << 8) | q[1]).toString(16)}:${((q[2] << 8) | q[3]).toString(16)}`;
  }
  const parseGroups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const halves = text6.split('::');
  let groups: number[];
  if (halves.length === 2) {
    const left = parseGroups(halves[0] ?? '');
    const right = parseGroups(halves[1] ?? '');
    groups = [...left, ...new Array<number>(Math.max(8 - left.length - right.length, 0)).fill(0), ...right];
  } else {
    groups = parseGroups(text6);
  }
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** Dotted IPv4 text from two 16-bit groups. */
function v4From(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address carries and that a packet to it would effectively reach:
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (deprecated but still routed by
 * some stacks), IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and 6to4
 * `2002:AABB:CCDD::`. Undefined when there is none.
 */
export function embeddedIPv4(groups: readonly number[]): string | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroTo = (n: number): boolean => groups.slice(0, n).every((g) => g === 0);
  if (zeroTo(5) && g5 === 0xffff) return v4From(g6, g7); // ::ffff:0:0/96 mapped
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return v4From(g6, g7); // ::ffff:0:0:0/96 translated
  // ::/96 compatible; ::, ::1 are handled as IPv6 themselves
  if (zeroTo(6) && (g6 !== 0 || g7 > 1)) return v4From(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4From(g6, g7);
  if (g0 === 0x2002) return v4From(g1, g2);
  return undefined;
}
