// The stderr line of a start that failed (`switchyard`, `switchyard emulate`): what failed, said once, and what to do.

import { operatorText, SwitchyardError, type ListenerName } from '../core/errors.js';

/** What to do when a listener's port is taken or refused: the flags that pick another (or turn the listener off). */
export const LISTENER_TODO: Readonly<Record<ListenerName, string>> = {
  'MCP listener': 'free that port, or pick another with --port (0 picks a free one)',
  'admin listener': 'free that port, pick another with --admin-port (0 picks a free one), or turn the admin listener off with --no-admin',
};

/**
 * The text after `switchyard: ` for an error that stopped a start: `CODE: message` (its
 * {@link operatorText}: a stdio child's last stderr line included), then the cause's message in parentheses. SWY_ERR_LISTEN_FAILED already names its listener, address and
 * cause (`listenFailed`), so it gets no parenthesis; for a port in use or refused (EADDRINUSE,
 * EACCES) it ends with `; ` and the listener's entry of `whatToDo` (the flags that pick another
 * port), e.g. `SWY_ERR_LISTEN_FAILED: Cannot listen: admin listener 127.0.0.1:7601: address already
 * in use (EADDRINUSE); free that port, …`. Anything that is not a SwitchyardError is its text.
 */
export function startFailureText(err: unknown, whatToDo: Readonly<Partial<Record<ListenerName, string>>>): string {
  if (!(err instanceof SwitchyardError)) return String(err);
  if (err.code === 'SWY_ERR_LISTEN_FAILED') {
    const reason = err.data?.reason;
    const todo = (reason === 'EADDRINUSE' || reason === 'EACCES') && whatToDo[err.data?.listener as ListenerName];
    return `${err.code}: ${err.message}${todo ? `; ${todo}` : ''}`;
  }
  return `${err.code}: ${operatorText(err)}${err.cause ? ` (${(err.cause as Error).message})` : ''}`;
}
