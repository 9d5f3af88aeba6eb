// What the gateway's assembly and `switchyard validate` both derive from a validated config: each
// mount's effective `auth`, and the compiled policy keys with their errors at the file's paths.
// Here, not in the gateway's module, so that `validate` checks them without loading the gateway
// (fastify and every front door).

import type { AuthMount } from '../auth/open-listener.js';
import type { PolicyWiring, PolicyWiringDeps } from '../policy/wire.js';
import { inFileTerms, type FrozenConfig } from './load.js';

/** Every mount with its effective `auth`: the upstream's own, else the top-level one (the aggregate mount: the top-level one). */
export function authMounts(config: FrozenConfig, mounts: ReadonlyArray<{ upstream: string | undefined; mcpPath: string }>): AuthMount[] {
  return mounts.map((m) => ({
    name: m.upstream ?? 'aggregate',
    path: m.mcpPath,
    auth: (m.upstream !== undefined ? config.upstreams[m.upstream]?.auth : undefined) ?? config.auth,
  }));
}

/**
 * Compiles the policy keys of `config` (createPolicyWiring, src/policy/wire.ts), its config errors
 * named at the paths of the config's own file: the wiring reads the normalized config, where the
 * upstreams are `/upstreams/NAME` also for a file that wrote `mcpServers` (inFileTerms maps them
 * back). The gateway's assembly and `switchyard validate` compile through it; a reload compiles a
 * config the runtime derives from the loaded one, and GatewayCore.reload maps its errors by the latter.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path (CEL compile errors,
 *   duplicate names, curation conflicts), `data: { source: 'policy', errors }`
 * @see docs/config.md, "Config file"
 */
export async function wirePolicy(config: FrozenConfig, deps: PolicyWiringDeps): Promise<PolicyWiring> {
  const { createPolicyWiring } = await import('../policy/wire.js');
  try {
    return await createPolicyWiring(config, deps);
  } catch (err) {
    throw inFileTerms(config, err);
  }
}
