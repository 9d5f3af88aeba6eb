// The one redirect rule of HTTP upstreams, for the era probe's POSTs and GET, the connectors'
// POSTs and the HTTP+SSE stream alike: same-origin 307/308 only, a few in a row.

/**
 * Same-origin redirects followed in a row; one more fails the request (a server that redirects
 * to itself would otherwise be asked without end).
 * @see RFC 9110 §15.4 (a client SHOULD detect and intervene in cyclical redirections)
 */
export const MAX_REDIRECTS = 5;

/**
 * What to do with an answer: follow it to `url`, or refuse it (`refuse`: the reason, in words a
 * client may read; `operatorRefuse`: the same naming the origins, for the operator; `note` for the step).
 */
export type Redirect = { follow: string; note: string } | { refuse: string; operatorRefuse?: string; note: string };

/**
 * Judges a 3xx answer by the one rule: a 307 or 308 whose `Location` (resolved against `from`)
 * has the origin `origin` is followed with the same method and body, at most
 * {@link MAX_REDIRECTS} in a row. Anything else is refused: another origin (the request's
 * credentials, `Authorization` among them, must not go there; the reason names that origin
 * only, since a Location's path and query may hold secrets), a 301, 302 or 303 (a client may or
 * must turn a POST into a GET there, which is no MCP request; the reason names no path, the
 * step's note does), a 3xx without a usable Location.
 * @param status the answer's HTTP status.
 * @param answerHeaders the answer's headers (`location` read).
 * @param from the absolute URL the request went to.
 * @param origin the origin of the URL first asked (`scheme://host[:port]`).
 * @param followed how many redirects were already followed in this chain.
 * @returns undefined when `status` is not 3xx; otherwise what to do.
 * @see RFC 9110 §15.4.8 (307), §15.4.9 (308), §15.4.2–§15.4.4 (301, 302, 303 change POST to GET)
 */
export function judgeRedirect(
  status: number,
  answerHeaders: Record<string, string | string[] | undefined>,
  from: string,
  origin: string,
  followed: number,
): Redirect | undefined {
  if (status < 300 || status > 399) return undefined;
  const raw = answerHeaders.location;
  const loc = Array.isArray(raw) ? raw[0] : raw;
  let next: URL | undefined;
  try {
    next = loc ? new URL(loc, from) : undefined;
  } catch {
    next = undefined;
  }
  if (!next) {
    const what = loc ? 'an unparsable Location' : 'no Location';
    return { refuse: `HTTP ${status} with ${what}`, note: `HTTP ${status} with ${what}: not followed` };
  }
  if (next.origin !== origin) {
    return {
      // The origins are the operator's (docs/security.md: an upstream's address never reaches a client).
      refuse: `HTTP ${status} redirect to another origin not followed: the request's headers and credentials go to the configured origin only`,
      operatorRefuse: `HTTP ${status} redirect to another origin (${next.origin}) not followed: the request's headers and credentials go to ${origin} only; use the other URL itself if you trust it`,
      note: `redirect to another origin (${next.origin}) refused: only same-origin redirects are followed`,
    };
  }
  if (status !== 307 && status !== 308) {
    // The reason reaches clients, logs and the status page, where an upstream's URL is its origin
    // only: a same-origin Location's path is most often the configured one (a trailing slash
    // added), key segment and all. The step's note, which `switchyard probe` shows its user, keeps it.
    return {
      refuse: `HTTP ${status} redirect not followed: only 307 and 308 keep the method and body (RFC 9110 §15.4); use the URL it names itself`,
      note: `redirect to ${next.pathname} refused: only 307 and 308 are followed`,
    };
  }
  if (followed >= MAX_REDIRECTS) {
    return { refuse: `more than ${MAX_REDIRECTS} redirects`, note: `redirect to ${next.pathname} refused: more than ${MAX_REDIRECTS} in a row` };
  }
  return { follow: next.href, note: `same-origin redirect to ${next.pathname}` };
}
