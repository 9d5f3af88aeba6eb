// The seam between the era modules and a cluster of replicas: sealed state any replica can open,
// session liveness every replica sees, resumption buffers and messages to the replica that holds
// a live stream or call. src/cluster implements it; era modules and the core see only these shapes.

/**
 * Seals and opens tokens (AES-256-GCM in src/cluster/seal.ts).
 * @see 2025-11-25 basic/transports#session-management (session ids: visible ASCII, cryptographically secure)
 */
export interface StateSeal {
  /**
   * Seals a JSON-serializable `value` for `purpose` until `expiresAtMs` (ms since the epoch).
   * @returns a token of visible ASCII characters.
   * @throws SwitchyardError `SWY_ERR_INTERNAL_FAULT` for a value JSON cannot carry.
   */
  seal(purpose: string, value: unknown, expiresAtMs: number): string;
  /** Opens a token sealed for `purpose`; undefined for anything else (forged, altered, expired, other purpose). Never throws. */
  open(purpose: string, token: unknown): unknown;
}

/** What one request of a session found: `live` (and the session's changeable state), or ended. */
export type SessionAdmission = 'live' | 'revoked' | 'idle';

/**
 * Revocation, idle expiry and the part of a session's state that changes after its id was
 * issued (log level, resource subscriptions), shared by every replica. Keys are digests of the
 * session id, never the id itself.
 */
export interface SessionLedger {
  /**
   * One step per request: `revoked` or `idle` (then 404), or `live` with the session's
   * changeable state (as stored by {@link SessionLedger.setState}) and the activity recorded.
   * @param idleMs idle time after which the session ends, ms.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` while the shared store is down.
   */
  admit(sessionId: string, idleMs: number): Promise<{ admission: SessionAdmission; state: string | undefined }>;
  /**
   * Records activity (a session is touched once when it is created).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`
   */
  touch(sessionId: string, idleMs: number): Promise<void>;
  /**
   * Stores the changeable state (JSON text) until the session idles out.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`
   */
  setState(sessionId: string, state: string, idleMs: number): Promise<void>;
  /**
   * Ends a session on every replica until `untilMs` (its sealed expiry, ms since the epoch).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`, `SWY_ERR_CLUSTER_REVOCATION_LIMIT`
   */
  revoke(sessionId: string, untilMs: number): Promise<void>;
}

/** How a resumption buffer answers an id it no longer holds. */
export interface ReplayOptions {
  /**
   * True: an id of the stream older than its oldest kept event gives every kept event (a gap);
   * false or absent: undefined. An unknown stream, another stream's id, or an id past the
   * stream's last event is undefined either way.
   */
  readonly allowGap?: boolean;
}

/** One event kept for resumption: its SSE `id` and `data`. */
export interface BufferedEvent {
  readonly id: string;
  readonly data: string;
}

/**
 * Resumption buffers every replica reads (Redis Streams). The stream's one producer numbers
 * its events; the event id is `<streamId>.<seq>`.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery
 */
export interface ResumeBuffer {
  /**
   * Stores event `seq` (0 for the priming event, then 1, 2, …) of `streamId`, kept `ttlMs`
   * after it (default: the buffer's own, the session idle time).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`, `SWY_ERR_CLUSTER_EVENT_TOO_LARGE`
   */
  put(streamId: string, seq: number, data: string, ttlMs?: number): Promise<void>;
  /**
   * The events after `lastEventId`, oldest first; undefined when that id is unknown, names
   * another stream or was trimmed (replaying would leave a gap).
   * @param options.allowGap an id older than what the stream still holds (trimmed) gives every
   *   event held after it instead of undefined (the ids show the gap): for a GET stream, which
   *   resumes with what is left.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`
   */
  replayAfter(streamId: string, lastEventId: string, options?: ReplayOptions): Promise<BufferedEvent[] | undefined>;
  /** Forgets a stream. */
  drop(streamId: string): Promise<void>;
}

/** A message between replicas: `kind` names it, the other members are JSON. */
export interface ReplicaMessage {
  readonly kind: string;
  readonly [member: string]: unknown;
}

/** Answers a message another replica sent (`from` is its id); what it returns goes back as JSON. */
export type ReplicaHandler = (message: ReplicaMessage, from: string) => unknown;

/**
 * Messages to other replicas of the cluster and leases on what one replica holds (streams),
 * scoped to one mount: kinds registered here see only this mount's messages.
 */
export interface ReplicaLink {
  /** This replica's id. */
  readonly replicaId: string;
  /**
   * Sends `message` to replica `to` and waits for its handler's answer.
   * @param timeoutMs time to wait for the answer, ms (default: the bus's forward timeout, 5,000).
   * @throws SwitchyardError `SWY_ERR_CLUSTER_OWNER_GONE` (nobody listens as `to`), `SWY_ERR_CLUSTER_FORWARD_TIMEOUT`,
   *   `SWY_ERR_CLUSTER_UNAVAILABLE`, `SWY_ERR_CLUSTER_FORWARD_LIMIT`, or the catalogue error the handler threw.
   */
  send(to: string, message: ReplicaMessage, timeoutMs?: number): Promise<unknown>;
  /** Sends `message` to replica `to` without waiting for an answer; false when it was not delivered. Never throws. */
  notify(to: string, message: ReplicaMessage): Promise<boolean>;
  /**
   * Sends `message` to every other replica. Never throws.
   * @param waitMs wait up to this long, ms, until every replica that received it has handled it.
   * @returns how many acknowledged (0 when not waiting).
   */
  broadcast(message: ReplicaMessage, waitMs?: number): Promise<number>;
  /** Handles messages of `kind` sent to this replica (one handler per kind). */
  on(kind: string, handler: ReplicaHandler): void;
  /**
   * Takes or renews the lease `key` for `ttlMs`; with `from`, takes it over only from that holder.
   * @returns true when this replica holds it now.
   * @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE`
   */
  claim(key: string, ttlMs: number, from?: string): Promise<boolean>;
  /** The replica holding lease `key`, if any. @throws SwitchyardError `SWY_ERR_CLUSTER_UNAVAILABLE` */
  ownerOf(key: string): Promise<string | undefined>;
  /** Gives the lease up if this replica holds it. Never throws. */
  release(key: string): Promise<void>;
}

/**
 * What the era modules of one mount get when sessions may span replicas. Without Redis,
 * `buffer` and `link` are undefined: one replica, buffers in memory, nothing to forward.
 */
export interface ReplicaServices {
  /** This replica's id (carried in stream ids, server-request ids and held-call states). */
  readonly replicaId: string;
  /** Seals session state into session ids. */
  readonly seal: StateSeal;
  readonly ledger: SessionLedger;
  /** Shared resumption buffers; undefined without Redis. */
  readonly buffer: ResumeBuffer | undefined;
  /** Messages and leases between replicas; undefined without Redis. */
  readonly link: ReplicaLink | undefined;
  /** Longest life of a sealed session id, ms (its sealed expiry). */
  readonly sessionMaxAgeMs: number;
  /** A short, non-reversible name of a session id for logs (ids are credentials): `sessionLogId`, the name spans carry too. */
  logId: (sessionId: string) => string;
}
