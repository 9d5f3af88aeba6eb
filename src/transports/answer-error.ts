// The error a request is refused with when something failed before its dialect: never a local
// error (HTTP status 0), and the operator hears of anything that is not the client's doing once.

import { SwitchyardError, toWireError } from '../core/errors.js';
import type { Logger } from '../log/logger.js';
import { Lines } from '../log/lines.js';

/** Errors already logged: a failed assembly is final, and every later request meets the same error object. */
const logged = new WeakSet<object>();

/**
 * The catalogue error to refuse a request with, for `err` thrown before its dialect (a front-door
 * check, authentication, the gateway's assembly or start):
 * - a wire error is answered as itself, unlogged (the caller logs refusals as it always has);
 * - a local error (config, startup: status 0) becomes `SWY_ERR_INTERNAL_FAULT` (500, -32603),
 *   since no HTTP answer may carry status 0 and its text is the operator's;
 * - anything else is ours: `SWY_ERR_INTERNAL_FAULT`.
 * The last two are logged at error, once per error object.
 */
export function answerError(err: unknown, log: Logger): SwitchyardError {
  if (err instanceof SwitchyardError && err.entry.wire !== false) return err;
  const once = typeof err === 'object' && err !== null;
  if (!once || !logged.has(err)) {
    if (once) logged.add(err);
    log.error({ err, ...(err instanceof SwitchyardError ? { code: err.code } : {}) }, Lines.internalFault);
  }
  return err instanceof SwitchyardError ? toWireError(err) : new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err });
}
