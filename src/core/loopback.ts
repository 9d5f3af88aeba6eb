// Whether a host names only this machine: the one rule the open-listener check, the admin listener and the HTTP front door's Host default share.

// Dotted decimal only, no leading zero: `127.1` and `0x7f.1` are names to WHATWG and to the schema.
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const LOOPBACK_V4 = new RegExp(`^127(?:\\.${OCTET}){3}$`);
const IPV6_CHARS = /^[0-9a-f:.]+$/;
// WHATWG writes an IPv4-mapped address as [::ffff:7fXX:XXXX]; 127/8 is 7f00::/8 of its last 32 bits.
const MAPPED_LOOPBACK_V4 = /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/;

/**
 * True when `host` only reaches this machine: the name `localhost` (any case, with or without its
 * one trailing dot), an address in 127.0.0.0/8 in dotted decimal, `::1` in any spelling, or an
 * IPv4-mapped 127.0.0.0/8 address (`::ffff:127.0.0.1`). IPv6 may be bare or bracketed; surrounding
 * whitespace is ignored. `0.0.0.0`, `::`, other names (`localhost.example`), and anything with a
 * port are not.
 * @param host a bind address or host name as configured (`listen.host`, `admin.host`) or as a
 *   listener reports it (`server.address().address`).
 * @see RFC 6761 §6.3 (localhost names resolve to loopback); RFC 1034 §3.1 (a trailing dot names the same, absolute, name)
 * @see RFC 6890 §2.2.2 (127.0.0.0/8 loopback); RFC 4291 §2.5.3 (::1), §2.5.5.2 (IPv4-mapped)
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  const bracketed = h.startsWith('[') && h.endsWith(']');
  if (!bracketed && (h === 'localhost' || h === 'localhost.')) return true;
  if (!bracketed && LOOPBACK_V4.test(h)) return true;
  const v6 = bracketed ? h.slice(1, -1) : h;
  if (!v6.includes(':') || !IPV6_CHARS.test(v6)) return false;
  let canonical: string;
  try {
    // The WHATWG serializer gives the RFC 5952 form, so every spelling of ::1 compares equal.
    canonical = new URL(`http://[${v6}]/`).hostname;
  } catch {
    return false;
  }
  return canonical === '[::1]' || MAPPED_LOOPBACK_V4.test(canonical);
}
