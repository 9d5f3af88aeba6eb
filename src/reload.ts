// Config reload: SIGHUP and `--watch` read the config file again. A valid config is applied in
// place (src/runtime.ts); an invalid one is logged path by path and counted as a failed reload,
// and the running config keeps serving.

import { realpathSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { FrozenConfig } from './config/load.js';
import { channels } from './core/diagnostics.js';
import { SwitchyardError } from './core/errors.js';
import type { Logger } from './log/logger.js';
import type { ReloadReport } from './runtime.js';

/** Inputs of {@link createReloader}. */
export interface ReloaderOptions {
  /**
   * Reads and validates the config again (the CLI: the file, with the environment and the flags
   * over it, exactly as at start).
   * @throws SwitchyardError SWY_ERR_CONFIG_INVALID listing every failing path
   */
  load(): Promise<FrozenConfig>;
  /** Applies a valid config (GatewayCore.reload). */
  apply(config: FrozenConfig): Promise<ReloadReport>;
  log: Logger;
  /** The config file, watched for changes when `watch` is set. */
  file?: string;
  /** Reload when the file changes (`--watch`). */
  watch?: boolean;
  /** Quiet time after the last change event before the reload, ms (default 250): editors write a file in several steps. */
  debounceMs?: number;
}

/** What one reload did. */
export type ReloadOutcome = { ok: true; report: ReloadReport } | { ok: false; error: unknown };

/** A running reloader. */
export interface Reloader {
  /**
   * Reloads now. Reloads run one at a time; a request while one runs is served by one more
   * reload after it (requests in between are coalesced). Never throws.
   */
  reload(): Promise<ReloadOutcome>;
  /** Stops watching; a reload in progress finishes. */
  close(): void;
}

/** The failing places of a refused config, for the log. */
function issuesOf(err: unknown): Array<{ path: string; message: string }> {
  if (err instanceof SwitchyardError && Array.isArray(err.data?.errors)) return err.data.errors as Array<{ path: string; message: string }>;
  return [{ path: '', message: err instanceof Error ? err.message : String(err) }];
}

/**
 * Whether `err` refuses the config itself, path by path (SWY_ERR_CONFIG_INVALID with
 * `data.errors`): what the loader throws, and what applying throws for the keys compiled only when
 * the gateway assembles (policy rules, rate limit names, curation renames; docs/policy.md).
 */
function refusesConfig(err: unknown): boolean {
  return err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID' && Array.isArray(err.data?.errors);
}

/**
 * Creates a reloader. Each reload publishes `{ ok, error? }` on the `reload` diagnostics channel
 * (the metrics count it as `switchyard_config_reloads_total{result}`), logs `config reload
 * refused` once per failing path of an invalid config (its JSON Pointer in `path`), and leaves
 * the running config in place when the new one is invalid or cannot be applied.
 * @see docs/operations.md, "Hot reload"
 */
export function createReloader(o: ReloaderOptions): Reloader {
  const { log } = o;
  let running: Promise<ReloadOutcome> | undefined;
  let again: Promise<ReloadOutcome> | undefined;
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  /** The watch on the directory of the file the config path resolves to, when that is another. */
  let target: { dir: string; base: string; watcher: FSWatcher } | undefined;

  const publish = (ok: boolean, error?: unknown, kept?: readonly string[]) => {
    if (channels.reload.hasSubscribers) channels.reload.publish(ok ? (kept && kept.length > 0 ? { ok, kept } : { ok }) : { ok, error });
  };

  /** Logs an invalid config path by path, then that it was not applied. */
  const refused = (error: unknown): ReloadOutcome => {
    const issues = issuesOf(error);
    for (const i of issues) log.error({ source: o.file, path: i.path, problem: i.message }, 'config reload refused');
    log.error({ source: o.file, errors: issues.length }, 'config reload failed; the running config stays');
    publish(false, error);
    return { ok: false, error };
  };

  const once = async (): Promise<ReloadOutcome> => {
    let next: FrozenConfig;
    try {
      next = await o.load();
    } catch (error) {
      return refused(error);
    }
    try {
      const report = await o.apply(next);
      publish(true, undefined, report.kept);
      return { ok: true, report };
    } catch (error) {
      // A policy rule that does not compile is as much the file's fault as a schema error.
      if (refusesConfig(error)) return refused(error);
      if (error instanceof SwitchyardError && error.code === 'SWY_ERR_ADMISSION_SHUTTING_DOWN') {
        // SIGTERM during a reload: routine (a rolling deploy), not a fault of the file or the gateway.
        log.info({ source: o.file }, 'config reload given up: shutting down');
        publish(false, error);
        return { ok: false, error };
      }
      log.error({ err: error, source: o.file }, 'config reload failed; the running config stays');
      publish(false, error);
      return { ok: false, error };
    }
  };

  const reload = (): Promise<ReloadOutcome> => {
    if (!running) {
      running = once().finally(() => (running = undefined));
      return running;
    }
    again ??= running.then(() => {
      again = undefined;
      return reload();
    });
    return again;
  };

  if (o.watch && o.file) {
    // The directory, not the file: editors and `mv` replace the file, which ends a watch on it.
    const file = path.resolve(o.file);
    const dir = path.dirname(file);
    const base = path.basename(o.file);
    // What the path resolves to: a Kubernetes ConfigMap volume replaces the file by swapping a
    // `..data` symlink in the directory, so no event names the file; any other event in the
    // directory reloads only when this changed.
    let seen = fingerprint(file);
    const changed = (named: boolean) => {
      clearTimeout(debounce);
      debounce = setTimeout(() => {
        const now = fingerprint(file);
        follow();
        if (!named && now === seen) return;
        seen = now;
        void reload();
      }, o.debounceMs ?? 250);
      debounce.unref();
    };
    watcher = watch(dir, { persistent: false }, (_event, name) => changed(name === null || name.toString() === base));
    watcher.on('error', (err) => log.error({ err, dir }, 'config watch failed'));
    // A path that is a symlink to a file in another directory: an edit of that file is an event
    // there only, so that directory is watched too (and followed when the link changes).
    const follow = () => {
      const real = realPath(file);
      const realDir = real === undefined ? undefined : path.dirname(real);
      if (realDir === target?.dir && real !== undefined && path.basename(real) === target?.base) return;
      target?.watcher.close();
      target = undefined;
      if (real === undefined || realDir === undefined || realDir === dir || watcher === undefined) return;
      const realBase = path.basename(real);
      try {
        const w = watch(realDir, { persistent: false }, (_event, name) => changed(name === null || name.toString() === realBase));
        w.on('error', (err) => log.error({ err, dir: realDir }, 'config watch failed'));
        target = { dir: realDir, base: realBase, watcher: w };
      } catch (err) {
        log.error({ err, dir: realDir }, 'config watch failed');
      }
    };
    follow();
  }

  return {
    reload,
    close() {
      clearTimeout(debounce);
      watcher?.close();
      watcher = undefined;
      target?.watcher.close();
      target = undefined;
    },
  };
}

/** The real path of `file` (through symlinks), or undefined when it cannot be resolved. */
function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/**
 * What `file` resolves to now: its real path (through symlinks), inode, size and modification
 * time, as one string; `missing` when it cannot be read. Two equal fingerprints mean the same file
 * content as far as the file system tells.
 */
function fingerprint(file: string): string {
  try {
    const st = statSync(file);
    return `${realpathSync(file)}\0${st.ino}\0${st.size}\0${st.mtimeMs}`;
  } catch {
    return 'missing';
  }
}
