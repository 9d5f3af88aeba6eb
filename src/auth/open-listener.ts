// Which mounts authenticate, and the refusal of an open gateway on a non-loopback address (light: no token verification code loads).

import { SwitchyardError } from '../core/errors.js';
import { isLoopbackHost } from '../core/loopback.js';
import type { AuthConfig } from './config.js';

/** One HTTP mount as authentication sees it. */
export interface AuthMount {
  /** The mount's name (for logs). */
  name: string;
  /** Its MCP path as the listener serves it (`listen.path` included), e.g. `/ev/mcp`. */
  path: string;
  /** Its effective `auth`: the mount's own, else the top-level one; undefined when neither is set. */
  auth: AuthConfig | undefined;
}

/**
 * The `auth` of a mount that authenticates HTTP requests: one with `bearer`, `apiKeys` or
 * `none`. An `auth` holding only `stdio` says nothing about HTTP, so it counts as absent.
 */
export function httpAuthOf(auth: AuthConfig | undefined): AuthConfig | undefined {
  return auth && (auth.bearer !== undefined || auth.apiKeys !== undefined || auth.none === true) ? auth : undefined;
}

/**
 * Refuses an open gateway on a network: on a listener that is not loopback, every mount must
 * have an `auth` (`bearer`, `apiKeys`, or `none: true` to say it is open on purpose), unless
 * `allowUnauthenticated` (`--allow-unauthenticated`). On loopback nothing is required.
 * @see 2025-11-25 basic/transports#security-warning (bind to localhost); docs/security.md
 * @throws SwitchyardError SWY_ERR_AUTH_OPEN_LISTENER naming the host and the mounts without `auth`
 */
export function checkOpenListener(host: string, mounts: readonly AuthMount[], allowUnauthenticated: boolean): void {
  if (allowUnauthenticated || isLoopbackHost(host)) return;
  const open = mounts.filter((m) => httpAuthOf(m.auth) === undefined).map((m) => m.path);
  if (open.length === 0) return;
  throw new SwitchyardError('SWY_ERR_AUTH_OPEN_LISTENER', {
    detail: `${host}: ${open.join(', ')} ${open.length === 1 ? 'has' : 'have'} no \`auth\`; configure \`auth\` (or \`auth: { none: true }\` to mean it), or pass --allow-unauthenticated`,
  });
}
