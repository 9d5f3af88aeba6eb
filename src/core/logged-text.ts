// How untrusted names (a component's, a principal's subject or issuer) are cut for log and audit lines.

/** Audit and log lines cut untrusted names to this many characters. */
export const MAX_LOGGED_NAME_CHARS = 256;

/**
 * `name` cut to {@link MAX_LOGGED_NAME_CHARS} characters (UTF-16 units) and an ellipsis (`…`) for
 * a log line: names are client-supplied (or the authorization server's to choose) and of any length.
 */
export function loggedName(name: string): string {
  return name.length > MAX_LOGGED_NAME_CHARS ? `${name.slice(0, MAX_LOGGED_NAME_CHARS)}…` : name;
}

/**
 * A principal's `sub` or `iss` as a log or audit line writes it: cut like a name
 * ({@link loggedName}); null when absent (anonymous). The audit line (`policy decision`) and the
 * `authenticated` debug line both write it so.
 */
export function loggedSubject(value: string | undefined): string | null {
  return value === undefined ? null : loggedName(value);
}
