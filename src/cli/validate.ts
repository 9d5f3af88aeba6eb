// `switchyard validate FILE`: checks a config file with the same code the gateway uses to load it.

import { SwitchyardError } from '../core/errors.js';
import { listMounts, loadConfig, type ConfigIssue } from '../config/load.js';
import { checkOpenListener } from '../auth/open-listener.js';
import { envOverrides } from '../config/options.js';

/**
 * Loads and validates a config file (YAML, JSON or `mcpServers` JSON; `${VAR}` read from the
 * environment; the `SWITCHYARD_*` variables over the file, as at start), compiles its policy rules, curation and rate limits, and reports the result on stdout (it is the command's output, like a linter's).
 * - Valid: prints `ok: N upstreams` (N enabled upstreams; `1 upstream` for one), or with
 *   `effective` the effective config (defaults applied, upstreams normalized) as JSON; returns 0.
 * - Invalid: prints `FILE: invalid config, K errors` and then one line per failing path,
 *   `  /json/pointer: message` (`(file)` for the file as a whole); returns 1.
 * - A listener beyond loopback with a mount that has no `auth`, without `allowUnauthenticated`:
 *   prints `FILE: ` and the start's own SWY_ERR_AUTH_OPEN_LISTENER text; returns 1.
 * @param file path of the config file.
 * @returns the process exit code: 0 valid, 1 invalid or unreadable.
 * @see docs/config.md, "Config file"
 */
export async function runValidate(file: string, opts: { effective?: boolean; allowUnauthenticated?: boolean } = {}): Promise<number> {
  try {
    // The environment's keys (SWITCHYARD_PORT, SWITCHYARD_CLUSTER_KEY, …) over the file, as the start
    // lays them: without them a file that leaves `cluster.key` to SWITCHYARD_CLUSTER_KEY was refused
    // here although the gateway starts with it, and `--effective` showed the file's port, not the one bound.
    const config = await loadConfig(file, { env: process.env, overrides: envOverrides(process.env) });
    // Policy rules (CEL), curation and rate limits compile when the gateway assembles; compile them here too, as it does.
    const quiet = { info() {}, warn() {} };
    const { authMounts, wirePolicy } = await import('../config/compile.js');
    await wirePolicy(config, { log: quiet });
    // A listener beyond loopback with a mount that has no `auth` is refused at start unless
    // --allow-unauthenticated is given (docs/security.md): refused here alike, so `ok` means it starts.
    checkOpenListener(config.listen.host, authMounts(config, listMounts(config)), opts.allowUnauthenticated ?? false);
    if (opts.effective) {
      process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
      return 0;
    }
    const n = Object.keys(config.upstreams).length;
    process.stdout.write(`ok: ${n} upstream${n === 1 ? '' : 's'}\n`);
    return 0;
  } catch (err) {
    if (err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID') {
      const errors = (err.data?.errors ?? []) as ConfigIssue[];
      const lines = errors.map((e) => `  ${e.path || '(file)'}: ${e.message}\n`);
      process.stdout.write(`${file}: invalid config, ${errors.length} error${errors.length === 1 ? '' : 's'}\n${lines.join('')}`);
    } else {
      process.stdout.write(`${file}: ${(err as Error).message}\n`);
    }
    return 1;
  }
}
