// The identity of the one local client of `--serve-stdio`: from `auth.stdio` and the operating system user, never from the wire.

import type { Identity } from '../core/identity.js';
import type { StdioIdentityConfig } from './config.js';

/**
 * The identity of the `--serve-stdio` client: `auth.stdio` from the config, the subject
 * defaulting to the operating system user. Issuer `switchyard:local`, source `local`.
 * @param env where the user name comes from (`USER`, `LOGNAME`, `USERNAME`).
 * @see 2025-11-25 basic/authorization (stdio: credentials from the environment)
 */
export function localIdentity(cfg: StdioIdentityConfig | undefined, env: Readonly<Record<string, string | undefined>>): Identity {
  const subject = cfg?.subject ?? env.USER ?? env.LOGNAME ?? env.USERNAME ?? 'local';
  return { issuer: 'switchyard:local', subject, scopes: [...(cfg?.scopes ?? [])], claims: { ...(cfg?.claims ?? {}) }, source: 'local' };
}
