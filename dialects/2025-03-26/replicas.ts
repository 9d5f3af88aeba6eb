// Initialize-era sessions across replicas: session ids that carry the sealed session state, stream
// ids that name their session and replica, and server-request ids that name the replica waiting
// for the client's answer (docs/scaling.md).

import { SwitchyardError } from '../../src/core/errors.js';
import type { RequestId } from '../../src/core/message.js';
import type { ReplicaServices } from '../../src/core/replica.js';
import { isSessionState, type SessionChanges, type SessionState } from './session.js';

/** Sealing purpose of 2025 session ids. */
export const SESSION_PURPOSE = 'session';
/** Sealing purpose of HTTP+SSE session ids (they name the replica holding the stream). */
export const SSE_SESSION_PURPOSE = 'sse-session';
/** Longest sealed session id, characters: proxies pass a header of 4 KiB reliably. */
export const MAX_SESSION_ID_CHARS = 4096;

/** The client info members kept when the whole of it would not fit the id. */
const CLIENT_INFO_KEPT = ['name', 'version', 'title', 'websiteUrl'] as const;

/**
 * Seals a new session's state into its id, valid until `state.c + sessionMaxAgeMs`. Client info
 * beyond `name`, `version`, `title` and `websiteUrl` (icons, descriptions) is dropped when the
 * whole would pass {@link MAX_SESSION_ID_CHARS}.
 * @throws SwitchyardError `SWY_ERR_SESSION_STATE_TOO_LARGE` when it does not fit even then (the detail gives
 *   the JSON sizes of the client info kept and of the capabilities, and the id length)
 * @see 2025-11-25 basic/transports#session-management (visible ASCII, cryptographically secure)
 */
export function sealSession(rs: ReplicaServices, state: SessionState): string {
  const until = state.c + rs.sessionMaxAgeMs;
  let info: unknown = state.ci;
  let id = rs.seal.seal(SESSION_PURPOSE, state, until);
  if (id.length > MAX_SESSION_ID_CHARS && state.ci) {
    const ci: Record<string, unknown> = {};
    for (const k of CLIENT_INFO_KEPT) if (state.ci[k] !== undefined) ci[k] = state.ci[k];
    info = ci;
    id = rs.seal.seal(SESSION_PURPOSE, { ...state, ci }, until);
  }
  if (id.length > MAX_SESSION_ID_CHARS) {
    // Name both parts with their sizes: either one (a long client name, large capabilities) can be
    // what does not fit, and the client must know which to shrink.
    const infoChars = (JSON.stringify(info) ?? '').length;
    const capsChars = JSON.stringify(state.cc).length;
    throw new SwitchyardError('SWY_ERR_SESSION_STATE_TOO_LARGE', {
      detail: `client info (${infoChars} characters of JSON) and capabilities (${capsChars} characters) need a session id of ${id.length} characters, limit ${MAX_SESSION_ID_CHARS}`,
    });
  }
  return id;
}

/** The state a 2025 session id carries, when it is ours, unexpired, of dialect `dialect` and opened on `mount`. */
export function openSealedSession(rs: ReplicaServices, id: string, mount: string, dialect: string): SessionState | undefined {
  const v = rs.seal.open(SESSION_PURPOSE, id);
  return isSessionState(v) && v.m === mount && v.d === dialect ? v : undefined;
}

/** The changeable state as the ledger stores it (JSON text), tolerant of anything else. */
export function parseChanges(text: string | undefined): SessionChanges {
  if (text === undefined) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** What a stream id says: whose session (digest), which replica produced it, its kind, and for a POST stream its request. */
export interface StreamName {
  /** Digest of the session id ({@link ReplicaServices.logId}). */
  readonly session: string;
  /** The replica that produced the stream. */
  readonly replica: string;
  /** `g`: the GET stream; `p`: a POST's response stream. */
  readonly kind: 'g' | 'p';
  /** The id of the request a POST stream answers, when short enough to carry. */
  readonly rid: RequestId | undefined;
}

const SEP = '~';

/** A request id as a stream id part: `n<int>` or `s<base64url>`; undefined for one too long to carry. */
function ridPart(id: RequestId): string | undefined {
  if (typeof id === 'number' && Number.isSafeInteger(id)) return `n${id}`;
  if (typeof id === 'string') {
    const b = Buffer.from(id, 'utf8').toString('base64url');
    return b.length <= 24 ? `s${b}` : undefined;
  }
  return undefined;
}

function ridOf(part: string | undefined): RequestId | undefined {
  if (part === undefined) return undefined;
  if (/^n-?[0-9]{1,16}$/.test(part)) return Number(part.slice(1));
  if (/^s[A-Za-z0-9_-]{0,24}$/.test(part)) return Buffer.from(part.slice(1), 'base64url').toString('utf8');
  return undefined;
}

/**
 * The id of stream `n` (base 36) of a session on this replica, unique in the cluster:
 * `<session digest>~<replica>~<kind><n>[~<request id>]`, at most 128 visible ASCII characters.
 * @see 2025-11-25 basic/transports#resumability-and-redelivery (event ids SHOULD encode the stream)
 */
export function streamName(session: string, replica: string, kind: 'g' | 'p', n: string, rid?: RequestId): string {
  const r = rid === undefined ? undefined : ridPart(rid);
  return [session, replica, `${kind}${n}`, ...(r ? [r] : [])].join(SEP);
}

/** Reads a stream id made by {@link streamName}; undefined for anything else. */
export function parseStreamName(id: string): StreamName | undefined {
  const parts = id.split(SEP);
  if (parts.length < 3 || parts.length > 4) return undefined;
  const [session, replica, kn, r] = parts;
  if (!/^[A-Za-z0-9_-]{22}$/.test(session) || !/^[A-Za-z0-9._-]{1,64}$/.test(replica) || !/^[gp][0-9a-z]{1,8}$/.test(kn)) return undefined;
  return { session, replica, kind: kn[0] as 'g' | 'p', rid: ridOf(r) };
}

/** The suffix of server-to-client request ids on replica `replicaId`. */
export function serverIdSuffix(replicaId: string): string {
  return `@${replicaId}`;
}

/** The replica a server-to-client request id names (`swy-<n>@<replica>`), if any. */
export function replicaOfServerRequest(id: unknown): string | undefined {
  if (typeof id !== 'string') return undefined;
  const m = /^swy-[0-9]+@([A-Za-z0-9._-]{1,64})$/.exec(id);
  return m ? m[1] : undefined;
}
