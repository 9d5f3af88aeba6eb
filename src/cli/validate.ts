// `switchyard validate FILE`: checks a config file with the same code the gateway uses to load it.

import { SwitchyardError } from '../core/errors.js';
import { loadConfig, type ConfigIssue } from '../config/load.js';

/**
 * Loads and validates a config file (YAML, JSON or `mcpServers` JSON; `${VAR}` read from the
 * environment) and reports the result.
 * - Valid: prints `ok: N upstreams` (N enabled upstreams; `1 upstream` for one) on stdout, returns 0.
 * - Invalid: prints `FILE: invalid config, K errors` and then one line per failing path,
 *   `  /json/pointer: message` (`(file)` for the file as a whole), on stderr; returns 1.
 * @param file path of the config file.
 * @returns the process exit code: 0 valid, 1 invalid or unreadable.
 * @see docs/config.md, "Config file"
 */
export async function runValidate(file: string): Promise<number> {
  try {
    const config = await loadConfig(file);
    const n = Object.keys(config.upstreams).length;
    process.stdout.write(`ok: ${n} upstream${n === 1 ? '' : 's'}\n`);
    return 0;
  } catch (err) {
    if (err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID') {
      const errors = (err.data?.errors ?? []) as ConfigIssue[];
      const lines = errors.map((e) => `  ${e.path || '(file)'}: ${e.message}\n`);
      process.stderr.write(`${file}: invalid config, ${errors.length} error${errors.length === 1 ? '' : 's'}\n${lines.join('')}`);
    } else {
      process.stderr.write(`${file}: ${(err as Error).message}\n`);
    }
    return 1;
  }
}
