// Strict mode's contract: a validator of messages against their era's official JSON schema,
// and the error that refuses an invalid client message.

import { SwitchyardError } from './errors.js';
import type { Sink } from './exchange.js';
import type { JsonObject, RpcMessage } from './message.js';
import type { EraClients, OutboundMessage, SessionEraClient } from './era.js';

/** One strict-mode finding: a message that does not match its era's JSON schema. */
export interface StrictViolation {
  /**
   * `in`: from the client; `out`: to the client; `from-upstream`: from an upstream (for a call:
   * UpstreamStrict in core/calls.ts; its handshake: {@link strictEraClients}; outside a call:
   * routeUnlabelled in upstreams/routing.ts); `to-upstream`: from the gateway to an upstream.
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

/** The id a handshake message is checked with: the connector picks the one it sends, so one stands in (as for a call's response). */
const STAND_IN_ID = 0;

/**
 * `eras` with strict mode on the upstream handshake, which every connector (a stdio child, an
 * HTTP upstream of each era, the HTTP era probe) builds and reads through its era client:
 * - the `initialize` request (`sessions.initialize`, `httpSse.initialize`): `to-upstream`, against
 *   the revision it offers (its `protocolVersion`);
 * - the InitializeResult, once the revision it settles on is known (`negotiated`, `describe`):
 *   `from-upstream`, method `initialize`, against that revision;
 * - the `server/discover` request (`stateless.discover`): `to-upstream`, against 2026-07-28;
 * - the DiscoverResult an upstream is taken as 2026-07-28 by (`stateless.describe`):
 *   `from-upstream`, method `server/discover`.
 * Each result object is checked once, however often a connector reads it. A result whose
 * revision Switchyard does not speak is not checked (the handshake fails, naming it). Only
 * logged (the validator's `check`), never refused. `notifications/initialized` takes no revision
 * here: the connectors check it where they send it.
 * @param eras the era clients from dialects/ (the composition root's)
 * @param validator strict mode's validator; undefined: `eras` as they are
 * @returns era clients that build and read the same messages as `eras`
 * @see 2025-11-25 basic/lifecycle#initialization; 2026-07-28 server/discover; docs/strict.md, "Upstreams"
 */
export function strictEraClients(eras: EraClients, validator: MessageValidator | undefined): EraClients {
  if (!validator) return eras;
  const seen = new WeakSet<object>();
  /** Checks an upstream's handshake result once, as the response envelope holding it. */
  const result = (era: string, method: string, r: JsonObject): void => {
    if (seen.has(r)) return;
    seen.add(r);
    validator.check('from-upstream', era, { jsonrpc: '2.0', id: STAND_IN_ID, result: r }, method);
  };
  /** Checks a handshake request Switchyard sends, in the revision `era`. */
  const request = (era: string, m: OutboundMessage): OutboundMessage => {
    validator.check('to-upstream', era, { jsonrpc: '2.0', id: STAND_IN_ID, ...m });
    return m;
  };
  const offered = (base: SessionEraClient, m: OutboundMessage): string =>
    typeof m.params.protocolVersion === 'string' ? m.params.protocolVersion : base.revisions[0];
  /** The initialize-era client `base` with its handshake checked. */
  const session = <T extends SessionEraClient>(base: T): T => ({
    ...base,
    initialize(o) {
      const m = base.initialize(o);
      return request(offered(base, m), m);
    },
    negotiated(r) {
      const revision = base.negotiated(r);
      result(revision, 'initialize', r);
      return revision;
    },
    describe(r, fallbackName) {
      const d = base.describe(r, fallbackName);
      result(d.upstreamRevision, 'initialize', r);
      return d;
    },
  });
  const { stateless } = eras;
  return {
    stateless: {
      ...stateless,
      discover(info) {
        return request(stateless.revisions[0], stateless.discover(info));
      },
      describe(r, fallbackName) {
        const d = stateless.describe(r, fallbackName);
        result(d.upstreamRevision, 'server/discover', r);
        return d;
      },
    },
    sessions: session(eras.sessions),
    httpSse: session(eras.httpSse),
  };
}
