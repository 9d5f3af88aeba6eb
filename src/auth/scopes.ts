// Scope hierarchies (`auth.bearer.scopeImplies`): which scope implies which, closed once when the config is loaded, and a credential's scopes closed under it.

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
