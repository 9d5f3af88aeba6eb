// Strict mode's contract: a validator of messages against their era's official JSON schema,
// and the error that refuses an invalid client message.

import { SwitchyardError } from './errors.js';
import type { Sink } from './exchange.js';
import type { RpcMessage } from './message.js';

/** One strict-mode finding: a message that does not match its era's JSON schema. */
export interface StrictViolation {
  /**
   * `in`: from the client; `out`: to the client; `from-upstream`: from an upstream, for a call
   * (UpstreamStrict in core/calls.ts); `to-upstream`: from the gateway to an upstream.
   */
  direction: 'in' | 'out' | 'from-upstream' | 'to-upstream';
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
  /** Checks one message; logs and returns the violations (an empty list, shared and frozen, when valid or unknown). */
  check(direction: StrictViolation['direction'], era: string, msg: unknown, method?: string): readonly StrictViolation[];
}

/**
 * The error that refuses an invalid client message in strict `reject` mode: -32600 when the
 * JSON-RPC envelope is wrong, -32602 when the params are.
 */
export function strictRejection(v: StrictViolation): SwitchyardError {
  const envelope = !v.path.startsWith('/params');
  return new SwitchyardError('SWY_ERR_REQ_SCHEMA', { detail: `${v.path}: ${v.message}`, rpcCode: envelope ? -32600 : -32602 });
}

/**
 * `inner` with every message it sends to the client checked against `era`'s schema first
 * (`out`; responses with the request's `method`). Checking only logs: the message is sent as it is.
 * A class, not an object literal with a `streaming` getter, which V8 makes anew per request.
 */
class CheckedSink implements Sink {
  constructor(
    private readonly inner: Sink,
    private readonly validator: MessageValidator,
    private readonly era: string,
    private readonly method: string | undefined,
    private readonly methodOnSend: boolean,
  ) {}

  get streaming(): boolean {
    return this.inner.streaming;
  }

  send(m: RpcMessage): boolean {
    this.validator.check('out', this.era, m, this.methodOnSend ? this.method : undefined);
    return this.inner.send(m);
  }

  finish(m: RpcMessage | RpcMessage[] | null, status?: number, headers?: Readonly<Record<string, string>>): void {
    if (m) for (const one of Array.isArray(m) ? m : [m]) this.validator.check('out', this.era, one, this.method);
    this.inner.finish(m, status, headers);
  }
}

/**
 * Wraps a request's answer channel so that strict mode checks what it sends (see CheckedSink):
 * `finish` checks a response against the result schema of `method`, and so does `send` when
 * `methodOnSend` is true (2026-07-28, whose streams carry nothing but this request's messages).
 * @see docs/strict.md
 */
export function checkedSink(inner: Sink, validator: MessageValidator, era: string, method: string | undefined, methodOnSend: boolean): Sink {
  return new CheckedSink(inner, validator, era, method, methodOnSend);
}
