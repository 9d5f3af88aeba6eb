// Scope hierarchies (`auth.bearer.scopeImplies`): which scope implies which, closed once when the config is loaded, a credential's scopes closed under it, and the required-scope check.

import type { SwitchyardError } from '../core/errors.js';
import type { Identity } from '../core/identity.js';
import { challengeError } from './challenge.js';

/**
 * A scope hierarchy, closed: what each scope implies, directly or through others.
 * @see 2026-07-28 basic/authorization (step-up authorization flow: the server accounts for scope
 *   hierarchies, broad implying narrow, when it judges whether a token's scopes suffice)
 */
export interface ScopeHierarchy {
  /** True when no scope implies another (the config is silent): {@link close} returns its input. */
  readonly empty: boolean;
  /**
   * `granted` closed under the hierarchy: the granted scopes in their order, then every scope
   * they imply that is not among them, each once, in the order the hierarchy reaches them.
   * Returns `granted` itself when nothing is added. Cost: one map lookup per granted scope, and
   * one set operation per implied scope; nothing is computed from the hierarchy here.
   * @param granted the scopes a token or API key grants (any number; repeats are kept as given).
   */
  close(granted: readonly string[]): readonly string[];
}

/** The hierarchy of a config that declares none: every scope stands for itself alone. */
export const NO_SCOPE_HIERARCHY: ScopeHierarchy = Object.freeze({ empty: true, close: (granted: readonly string[]) => granted });

/**
 * Compiles `implies` (a scope → the scopes it implies directly) into its transitive closure, once:
 * for every scope named as a key, every scope reachable from it, itself excluded. A cycle
 * (`a → b → a`) ends where a scope is met again, so `a` and `b` imply each other. Work and memory
 * are bounded by the schema's bounds (64 keys of at most 64 scopes each): at most 64 searches over
 * at most 64 × 65 distinct scopes.
 * @param implies the validated `scopeImplies` map (`src/auth/schema.json`); an empty map (the
 *   default) gives {@link NO_SCOPE_HIERARCHY}.
 * @see 2026-07-28 basic/authorization, step-up authorization flow; RFC 6749 §3.3 (scope tokens)
 */
export function compileScopeHierarchy(implies: Readonly<Record<string, readonly string[]>>): ScopeHierarchy {
  const direct = new Map<string, readonly string[]>(Object.entries(implies));
  if (direct.size === 0) return NO_SCOPE_HIERARCHY;
  const closure = new Map<string, readonly string[]>();
  for (const start of direct.keys()) {
    // Breadth first: the scopes it names itself come before those they imply in turn.
    const reached: string[] = [];
    const seen = new Set<string>([start]);
    for (let i = -1; i < reached.length; i++) {
      for (const next of direct.get(i < 0 ? start : reached[i]) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        reached.push(next);
      }
    }
    if (reached.length > 0) closure.set(start, Object.freeze(reached));
  }
  if (closure.size === 0) return NO_SCOPE_HIERARCHY;
  return Object.freeze({
    empty: false,
    close(granted: readonly string[]): readonly string[] {
      let out: string[] | undefined;
      let have: Set<string> | undefined;
      for (const g of granted) {
        const implied = closure.get(g);
        if (implied === undefined) continue;
        if (have === undefined) {
          out = [...granted];
          have = new Set(granted);
        }
        for (const s of implied) {
          if (have.has(s)) continue;
          have.add(s);
          out!.push(s);
        }
      }
      return out ?? granted;
    },
  });
}

/**
 * The scopes of `required` that `identity` lacks, in `required`'s order; empty when it has them all.
 * `identity.scopes` is taken as already closed under the hierarchy (a verified token's and an API
 * key's are, when they are made), so a scope a granted one implies counts as granted.
 * @param required the scopes every credential must grant (`auth.bearer.scopes`), any number.
 * @param identity the verified identity: its granted scopes, closed.
 * @see 2026-07-28 basic/authorization, step-up authorization flow (broad scopes imply narrow ones)
 */
export function missingScopes(required: readonly string[], identity: Pick<Identity, 'scopes'>): readonly string[] {
  return required.filter((s) => !identity.scopes.includes(s));
}

/**
 * The refusal of `identity` for `resource` when it lacks a scope of `required`, or undefined when it
 * has them all: the one required-scope check, for tokens and API keys alike.
 * @param required the scopes every credential must grant (`auth.bearer.scopes`).
 * @param identity the verified identity (scopes closed under the hierarchy).
 * @param resource `prmUrl`: the mount's RFC 9728 metadata URL, named in the challenge.
 * @returns SwitchyardError SWY_ERR_AUTH_INSUFFICIENT_SCOPE (403): its message names the scopes
 *   missing (`missing mcp:read`), its `WWW-Authenticate` every required scope, not only those.
 * @see 2026-07-28 basic/authorization, runtime insufficient scope errors (R4: the challenge lists
 *   all the scopes needed); RFC 6750 §3.1 (insufficient_scope)
 */
export function insufficientScope(required: readonly string[], identity: Pick<Identity, 'scopes'>, resource: { prmUrl: string }): SwitchyardError | undefined {
  const missing = missingScopes(required, identity);
  if (missing.length === 0) return undefined;
  // R4: the challenge names every scope the resource needs, so that one step-up asks for them all.
  return challengeError('SWY_ERR_AUTH_INSUFFICIENT_SCOPE', resource, { detail: `missing ${missing.join(' ')}`, scope: required });
}

/** The scope RFC 9728 metadata never lists: whether to ask for a refresh token is the client's to decide. */
const OFFLINE_ACCESS = 'offline_access';

/**
 * The scopes a mount's RFC 9728 metadata lists in `scopes_supported`: the required `scopes` first
 * (what the 401 challenge names), then `scopesSupported` (scopes policy rules check, listed by the
 * operator), then every scope `scopeImplies` names, each key followed by the scopes it lists (a
 * broad scope that meets the requirement, and the narrower ones it stands for), each scope once,
 * in that order; `offline_access` never. At most 64 + 64 + 64 × 65 names (the schema's bounds).
 * API keys' scopes are not listed: no authorization request asks for them.
 * @see RFC 9728 §2 (`scopes_supported`: the scope values used in authorization requests to access
 *   the resource); 2026-07-28 basic/authorization (scope selection; refresh tokens: servers SHOULD
 *   NOT list `offline_access`)
 */
export function supportedScopes(bearer: {
  readonly scopes?: readonly string[];
  readonly scopesSupported?: readonly string[];
  readonly scopeImplies?: Readonly<Record<string, readonly string[]>>;
}): string[] {
  const out = new Set<string>(bearer.scopes);
  for (const s of bearer.scopesSupported ?? []) out.add(s);
  for (const [broad, narrow] of Object.entries(bearer.scopeImplies ?? {})) {
    out.add(broad);
    for (const s of narrow) out.add(s);
  }
  out.delete(OFFLINE_ACCESS);
  return [...out];
}
