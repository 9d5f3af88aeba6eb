// The long-lived streams open on one mount (2025 GET streams, HTTP+SSE streams, 2026-07-28 listens) with the credential each was opened with, so that a reload that changes `auth` can end those the new front door refuses.

import { SwitchyardError } from './errors.js';
import type { CoreLog } from './exchange.js';
import { policyViewKey, principalKey, type Identity } from './identity.js';
import { createIntervalLine } from './interval-line.js';
import { loggedSubject } from './logged-text.js';

/**
 * The credential a request was admitted with, as the HTTP front door can check it again later:
 * its `Authorization` field and the public base URL its resource URI was built from. Held in
 * memory for the stream's life only; never logged.
 * @see RFC 6750 §2.1 (the bearer credential); RFC 8707 (the resource a token is for)
 */
export interface StreamCredential {
  /** The request's `Authorization` value, undefined when it had none. */
  readonly authorization: string | undefined;
  /** `scheme://host[:port]` and any proxy prefix, no trailing `/`: the mount's resource URI is this plus its MCP path. */
  readonly baseUrl: string;
}

/** The kinds of stream held: a 2025 session's GET stream, an HTTP+SSE session's stream, a 2026-07-28 listen. */
export type HeldStreamKind = 'get' | 'http-sse' | 'listen';

/** One stream as its dialect registers it ({@link OpenStreams.hold}). */
export interface HeldStreamInit {
  /** The client's dialect id. */
  dialect: string;
  kind: HeldStreamKind;
  /** The session's log id (its digest, never the id), for a session's stream. */
  sessionId?: string;
  /**
   * The verified caller whose view its notifications are filtered for (null: anonymous): the one
   * that opened it, then the one its credential proves at the latest check ({@link follow}).
   */
  identity: Identity | null;
  /** What it was admitted with; undefined where no front door admitted it (stdio, a host's own identity): never checked again. */
  credential: StreamCredential | undefined;
  /**
   * Ends the stream now: the client sees it close. A 2026-07-28 listen is answered with `why`
   * first, or with its graceful `complete` result when `why` is null (nothing was refused: the
   * mount no longer authenticates). Must call the release {@link OpenStreams.hold} returned,
   * directly or through the stream's own close handler.
   */
  end(why: SwitchyardError | null): void;
  /**
   * The credential now proves `identity`: the same principal with other scopes, claims or client
   * (a reload changed the key's scopes, `scopeImplies`, the claims selected). From now on the
   * stream's notifications are filtered for it, as a new request's answers would be; the
   * stream stays open. Synchronous; nothing is delivered between the old filter and the new.
   */
  follow(identity: Identity): void;
}

/**
 * Checks a credential with the front door in force now: resolves the identity it proves (null
 * where the mount no longer authenticates), or throws the refusal a new request with it would
 * get (a SwitchyardError: SWY_ERR_AUTH_INVALID_TOKEN, SWY_ERR_AUTH_REQUIRED, …).
 */
export type CredentialCheck = (credential: StreamCredential) => Promise<Identity | null>;

/** The log line of a stream ended because its credential no longer passes. */
export const STREAM_CREDENTIAL_REFUSED = 'open stream ended: its credential no longer passes';
/** The log line of an authenticated stream ended because its mount no longer authenticates (a reload removed its `auth`). */
export const STREAM_MOUNT_UNAUTHENTICATED = 'open stream ended: its mount no longer authenticates';
/** The log line of a stream kept whose credential now proves other scopes or claims (same principal): filtered for them from now on. */
export const STREAM_IDENTITY_FOLLOWED = 'open stream kept: its notifications now follow the identity its credential proves';
/** The log line of a stream kept because its credential could not be checked. */
export const STREAM_CREDENTIAL_UNCHECKED = 'open stream kept: its credential could not be checked';

/** The checks of one re-check that could not decide (the issuer unreachable): how many, and the first refusal. */
interface UndecidedTally {
  count: number;
  first?: SwitchyardError;
}

/** At most this many credentials are checked at once by one {@link OpenStreams.recheck} (introspection makes one POST each). */
const RECHECK_CONCURRENCY = 8;
/**
 * How often a stream past its credential's expiry is checked again while the front door still
 * accepts the credential (within its `clockToleranceSec`), ms.
 */
export const EXPIRED_RECHECK_MS = 5_000;
/**
 * At most one {@link STREAM_CREDENTIAL_UNCHECKED} line per this many ms per mount for the checks at
 * expiry (each stream past its token's exp is checked every {@link EXPIRED_RECHECK_MS} while the
 * issuer cannot be asked: with many streams, a line each would flood the log), ms.
 */
export const EXPIRED_UNCHECKED_LOG_INTERVAL_MS = 60_000;
/** The longest delay `setTimeout` keeps, ms (2^31 − 1); a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The open long-lived streams of one mount. Bounded by what bounds the streams themselves: one
 * per HTTP+SSE session and one connected GET stream per 2025 session (`maxSessions` each), and
 * the listens counted against `maxSubscriptions`; an entry leaves when its stream closes.
 * @see docs/security.md ("Revoking a key (or changing `auth`) needs no restart")
 */
export class OpenStreams {
  /** The open streams, each with its expiry timer (one whose identity has `expiresAtMs`). */
  private readonly open = new Map<HeldStreamInit, NodeJS.Timeout | undefined>();
  /** The front door's check, when an HTTP front door admits this mount's requests ({@link checkWith}). */
  private check: CredentialCheck | undefined;
  /** True once a reload changed this mount's `auth`: a stream registered since is checked too (it may have been admitted by the front door the reload replaced). */
  private reloaded = false;
  /** Bounds the undecided checks at expiry to one warn line per {@link EXPIRED_UNCHECKED_LOG_INTERVAL_MS}, with their count. */
  private readonly uncheckedAtExpiry = createIntervalLine(EXPIRED_UNCHECKED_LOG_INTERVAL_MS);

  /**
   * @param mount the mount's name (log lines).
   * @param log where ended streams are logged; none: silent.
   */
  constructor(
    private readonly mount: string,
    private readonly log?: CoreLog,
  ) {}

  /** Streams held now. */
  get size(): number {
    return this.open.size;
  }

  /** Sets the check of the front door in force (it must read the current one at each call: a reload replaces it). */
  checkWith(check: CredentialCheck): void {
    this.check = check;
  }

  /**
   * Registers an open stream until the returned release is called (idempotent; call it when the
   * stream closes, whatever closed it). After a reload that changed this mount's `auth`, the new
   * stream's credential is checked at once, as the open ones were. A stream whose identity has
   * `expiresAtMs` ends then: a token the front door verified is checked with it again (which
   * passes while within the door's clock tolerance, and cannot decide while the issuer is
   * unreachable: checked again every {@link EXPIRED_RECHECK_MS} in both cases), any other
   * identity (a host's) ends at that time.
   */
  hold(init: HeldStreamInit): () => void {
    this.open.set(init, undefined);
    if (this.reloaded && this.check && init.credential) void this.checkOne(init, this.check, new Map());
    const exp = init.identity?.expiresAtMs;
    if (exp !== undefined) this.armExpiry(init, exp - Date.now());
    return () => {
      const timer = this.open.get(init);
      if (timer) clearTimeout(timer);
      this.open.delete(init);
    };
  }

  /** Arms `s`'s expiry timer `ms` from now (in steps past setTimeout's bound). */
  private armExpiry(s: HeldStreamInit, ms: number): void {
    if (!this.open.has(s)) return;
    const step = Math.max(0, Math.min(ms, MAX_TIMER_MS));
    const timer = setTimeout(() => {
      if (ms > MAX_TIMER_MS) return this.armExpiry(s, ms - MAX_TIMER_MS);
      void this.expired(s);
    }, step);
    timer.unref();
    this.open.set(s, timer);
  }

  /** `s`'s credential reached its expiry: ended unless the front door still accepts it. */
  private async expired(s: HeldStreamInit): Promise<void> {
    if (!this.open.has(s)) return;
    this.open.set(s, undefined);
    // Only what the front door verified is its to check again (a host's identity is the host's).
    const fromDoor = s.identity?.source === 'jwt' || s.identity?.source === 'introspection';
    if (this.check && s.credential && fromDoor) {
      // Accepted within the tolerance, or not decided (the issuer unreachable): asked again later.
      if ((await this.checkOne(s, this.check, new Map(), 'expired')) !== 'ended') this.armExpiry(s, EXPIRED_RECHECK_MS);
      return;
    }
    this.endStream(s, new SwitchyardError('SWY_ERR_AUTH_INVALID_TOKEN', { detail: 'the credential expired' }), 'expired');
  }

  /**
   * Checks every held stream's credential with the front door in force (a reload changed this
   * mount's `auth`), each distinct credential once and at most {@link RECHECK_CONCURRENCY} at a
   * time, and ends those it refuses, or whose credential now proves another principal (the
   * session the stream belongs to is then another caller's: its requests get 404) or, on a mount
   * that no longer authenticates, no principal; logging each at info with the principal (`iss`, `sub`: an API key's name) and the refusal's code, never the credential.
   * A stream whose credential proves the same principal with other scopes, claims or client is
   * kept and follows that identity (`HeldStreamInit.follow`), logged at info. A stream whose check
   * fails for another reason (the issuer unreachable, 503) is kept; those are logged together at
   * warn, once the checks settled: one {@link STREAM_CREDENTIAL_UNCHECKED} line for the whole
   * re-check (`cause: 'reload'`, `unchecked`: how many streams were kept so, with the first such
   * refusal's `code` and `reason`), not one per stream. Streams without a credential (stdio, a
   * host's own identity) are not checked.
   * @param check the front door's check; default the one {@link checkWith} set.
   * @returns once every check settled: how many streams were ended.
   */
  async recheck(check: CredentialCheck | undefined = this.check): Promise<number> {
    if (!check) return 0;
    this.reloaded = true;
    const todo = [...this.open.keys()].filter((s) => s.credential !== undefined);
    const verdicts = new Map<string, Promise<Identity | null | SwitchyardError>>();
    const undecided: UndecidedTally = { count: 0 };
    let ended = 0;
    let next = 0;
    const worker = async () => {
      while (next < todo.length) if ((await this.checkOne(todo[next++], check, verdicts, 'reload', undecided)) === 'ended') ended++;
    };
    await Promise.all(Array.from({ length: Math.min(RECHECK_CONCURRENCY, todo.length) }, worker));
    // One line for the reload, however many streams the issuer being down left unchecked.
    if (undecided.first)
      this.log?.warn(
        { mount: this.mount, cause: 'reload', code: undecided.first.code, reason: undecided.first.message, unchecked: undecided.count },
        STREAM_CREDENTIAL_UNCHECKED,
      );
    return ended;
  }

  /**
   * Checks one stream (sharing verdicts by credential), and judges the identity its credential
   * proves now against the stream's: refused, or another principal (its session is then another
   * caller's), ends it; null where it was authenticated (the mount no longer authenticates) ends
   * it without a refusal; the same principal with another policy view (`policyViewKey`: scopes,
   * claims, client) is followed in place; the same view is accepted as it is. A check that cannot
   * decide is counted in `undecided` when given (a reload's re-check logs them once), else logged.
   */
  private async checkOne(
    s: HeldStreamInit,
    check: CredentialCheck,
    verdicts: Map<string, Promise<Identity | null | SwitchyardError>>,
    cause: 'reload' | 'expired' = 'reload',
    undecided?: UndecidedTally,
  ): Promise<'ended' | 'kept' | 'accepted'> {
    const c = s.credential!;
    const key = `${c.baseUrl}\n${c.authorization ?? ''}`;
    let verdict = verdicts.get(key);
    if (!verdict) {
      verdict = check(c).catch((err: unknown) => (err instanceof SwitchyardError ? err : new SwitchyardError('SWY_ERR_INTERNAL_FAULT', { cause: err })));
      verdicts.set(key, verdict);
    }
    const got = await verdict;
    if (!this.open.has(s)) return 'kept';
    if (got instanceof SwitchyardError) {
      if (got.entry.fault !== 'client') {
        if (undecided) {
          undecided.count++;
          undecided.first ??= got;
          return 'kept';
        }
        // A stream registered while a reload ran is said on its own; the checks at expiry repeat every
        // EXPIRED_RECHECK_MS for every such stream while the issuer is down: one line a minute,
        // counting them (`unchecked`), named by the stream that was due.
        const n = cause === 'expired' ? this.uncheckedAtExpiry.hit() : 1;
        if (n !== undefined)
          this.log?.warn(
            { ...this.fieldsOf(s), cause, code: got.code, reason: got.message, ...(cause === 'expired' ? { unchecked: n } : {}) },
            STREAM_CREDENTIAL_UNCHECKED,
          );
        return 'kept';
      }
      this.endStream(s, got, cause);
      return 'ended';
    }
    if (got === null && s.identity !== null) {
      // Opened as a principal, now anyone's: its session (bound to that principal) answers 404 to
      // the anonymous requests that follow, and what it was let see was that principal's.
      this.endStream(s, null, cause);
      return 'ended';
    }
    if (principalKey(got) !== principalKey(s.identity)) {
      this.endStream(s, new SwitchyardError('SWY_ERR_AUTH_INVALID_TOKEN', { detail: 'the credential now names another principal' }), cause);
      return 'ended';
    }
    if (got !== null && policyViewKey(got) !== policyViewKey(s.identity)) {
      s.follow(got);
      s.identity = got;
      this.log?.info({ ...this.fieldsOf(s), cause }, STREAM_IDENTITY_FOLLOWED);
    }
    return 'accepted';
  }

  /** Ends `s` with `why` (null: its mount no longer authenticates), logged. */
  private endStream(s: HeldStreamInit, why: SwitchyardError | null, cause: 'reload' | 'expired'): void {
    const timer = this.open.get(s);
    if (timer) clearTimeout(timer);
    this.open.delete(s);
    if (why === null) this.log?.info({ ...this.fieldsOf(s), cause }, STREAM_MOUNT_UNAUTHENTICATED);
    else this.log?.info({ ...this.fieldsOf(s), cause, code: why.code, reason: why.message }, STREAM_CREDENTIAL_REFUSED);
    s.end(why);
  }

  /** What a log line says of `s`: never its credential. */
  private fieldsOf(s: HeldStreamInit): Record<string, unknown> {
    return {
      mount: this.mount,
      dialect: s.dialect,
      kind: s.kind,
      ...(s.sessionId !== undefined ? { sessionId: s.sessionId } : {}),
      principal: { iss: loggedSubject(s.identity?.issuer), sub: loggedSubject(s.identity?.subject) },
    };
  }
}
