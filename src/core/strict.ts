// Strict mode's contract: a validator of messages against their era's official JSON schema,
// and the error that refuses an invalid client message.

import { SwitchyardError } from './errors.js';

/** One strict-mode finding: a message that does not match its era's JSON schema. */
export interface StrictViolation {
  /** `in`: from the client; `out`: to the client. */
  direction: 'in' | 'out';
  /** The era (revision) whose schema was used. */
  era: string;
  /** The JSON-RPC method (of the request, for responses). */
  method: string;
  /** JSON Pointer into the message. */
  path: string;
  /** What the schema says (definition: ajv message). */
  message: string;
  envelope?: boolean;
}

/** Validates messages against the official schema of an era (strict mode). */
export interface MessageValidator {
  /** `log`: report only; `reject`: also refuse invalid client messages. */
  readonly mode: 'log' | 'reject';
  /** Checks one message; logs and returns the violations ([] when valid or unknown). */
  check(direction: 'in' | 'out', era: string, msg: unknown, method?: string): StrictViolation[];
}

/**
 * The error that refuses an invalid client message in strict `reject` mode: -32600 when the
 * JSON-RPC envelope is wrong, -32602 when the params are.
 */
export function strictRejection(v: StrictViolation): SwitchyardError {
  const envelope = !v.path.startsWith('/params');
  return new SwitchyardError('SWY_ERR_REQ_SCHEMA', { detail: `${v.path}: ${v.message}`, rpcCode: envelope ? -32600 : -32602 });
}
