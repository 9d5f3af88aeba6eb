// Strict parser for an HTTP authority (a `Host` value or an absolute-form target's authority).

import { isIPv4, isIPv6 } from 'node:net';

/** What kind of host an authority names. */
export type HostKind = 'reg-name' | 'ipv4' | 'ipv6';

/**
 * A parsed authority.
 * - `host`: lower-cased; a reg-name without its one trailing dot; an IPv4 address in dotted
 *   decimal; an IPv6 address in brackets, in the RFC 5952 text form (`[::1]`), as WHATWG
 *   `URL.hostname` writes it.
 * - `port`: the decimal port (0–65535), absent when the authority has none or an empty one.
 */
export interface Authority {
  host: string;
  port?: number;
  kind: HostKind;
}

/** Longest reg-name accepted, characters (RFC 3986 §3.2.2 limits DNS-style names to 255). */
export const MAX_REG_NAME_LENGTH = 255;

// RFC 3986 §2.3 unreserved and §2.2 sub-delims: the characters a reg-name may hold once
// percent-encoding is refused.
const REG_NAME = /^[A-Za-z0-9\-._~!$&'()*+,;=]+$/;
// RFC 3986 §3.2.3: port = *DIGIT; we take at most five.
const PORT = /^[0-9]{0,5}$/;
// The IPv6address alphabet (RFC 3986 §3.2.2), which keeps zone ids (`%`) out of node:net.
const IPV6_CHARS = /^[0-9A-Fa-f:.]+$/;
// A last label that the WHATWG URL host parser reads as a number ("ends in a number").
const NUMERIC_LABEL = /^(?:[0-9]+|0[xX][0-9A-Fa-f]*)$/;

/**
 * Parses an HTTP authority: `host [ ":" port ]` with `host` a reg-name, an IPv4 address, or an
 * IPv6 literal in brackets with nothing after `]` but `:port`.
 *
 * Refused (null): userinfo (`@`), percent-encoding and every character outside the RFC 3986
 * sets (so whitespace, `\`, non-ASCII), an empty host, IPvFuture and IPv6 zone ids, a port of
 * more than five digits or above 65535, a reg-name over 255 characters, and a reg-name whose
 * last label is numeric but that is not a dotted-decimal IPv4 address (`127.1`, `0x7f.1`,
 * `1.2.3.04`, `a.1`): RFC 3986 calls those reg-names, WHATWG URL reads them as IPv4, and no DNS
 * name has a numeric top label (RFC 3696 §2), so refusing them leaves no gap between parsers.
 * An empty port (`host:`) is allowed and treated as absent (RFC 3986 §3.2.3).
 *
 * @param text the field value, already stripped of surrounding whitespace by the HTTP parser.
 * @returns the authority, or null when it is not a valid HTTP authority.
 * @see RFC 3986 §3.2 (authority), §3.2.2 (host), §3.2.3 (port); RFC 9112 §3.2 (Host), §3.2.2 (absolute-form)
 * @see RFC 9110 §4.2.1 (an http URI with an empty host is invalid)
 */
export function parseAuthority(text: string): Authority | null {
  if (text.length === 0 || text.length > MAX_REG_NAME_LENGTH + 8) return null;
  let hostText: string;
  let portText: string | undefined;
  if (text.charCodeAt(0) === 91 /* [ */) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    hostText = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest.length > 0) {
      if (rest.charCodeAt(0) !== 58 /* : */) return null;
      portText = rest.slice(1);
    }
    if (!IPV6_CHARS.test(hostText) || !isIPv6(hostText)) return null;
    const port = parsePort(portText);
    if (port === null) return null;
    // The WHATWG serializer gives the RFC 5952 form, so equal addresses compare equal as text.
    const host = new URL(`http://[${hostText}]/`).hostname;
    return port === undefined ? { host, kind: 'ipv6' } : { host, port, kind: 'ipv6' };
  }
  const colon = text.lastIndexOf(':');
  if (colon >= 0) {
    hostText = text.slice(0, colon);
    portText = text.slice(colon + 1);
  } else hostText = text;
  const port = parsePort(portText);
  if (port === null) return null;
  const host = parseHost(hostText);
  if (host === null) return null;
  return port === undefined ? host : { ...host, port };
}

/** Parses the host part outside brackets: IPv4 or reg-name. */
function parseHost(text: string): Authority | null {
  if (!REG_NAME.test(text)) return null;
  // One trailing dot names the same DNS root-relative name (RFC 1034 §3.1); strip exactly one.
  const name = (text.endsWith('.') ? text.slice(0, -1) : text).toLowerCase();
  if (name.length === 0 || name.length > MAX_REG_NAME_LENGTH) return null;
  // RFC 3986 §3.2.2: a host that matches IPv4address is an IPv4 literal, not a reg-name.
  if (isIPv4(name)) return { host: name, kind: 'ipv4' };
  const lastDot = name.lastIndexOf('.');
  if (NUMERIC_LABEL.test(lastDot < 0 ? name : name.slice(lastDot + 1))) return null;
  return { host: name, kind: 'reg-name' };
}

/** `undefined` for no or an empty port, null for an invalid one. */
function parsePort(text: string | undefined): number | undefined | null {
  if (text === undefined || text.length === 0) return undefined;
  if (!PORT.test(text)) return null;
  const n = Number(text);
  return n <= 65535 ? n : null;
}

/**
 * Formats an authority back into `host[:port]` (the port omitted when absent).
 * @see RFC 3986 §3.2
 */
export function formatAuthority(a: Authority): string {
  return a.port === undefined ? a.host : `${a.host}:${a.port}`;
}
