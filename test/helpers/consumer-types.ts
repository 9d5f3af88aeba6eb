// Test helper: a TypeScript consumer of the package in a temporary directory, type-checked with the
// repository's tsc against the shipped declarations (dist/), as a user's project resolves them.

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NO_COVERAGE_ENV, REPO_ROOT } from './gateway.js';

const run = promisify(execFile);

/** What {@link typecheckConsumer} builds: the consumer's `index.ts`, its compiler options, the packages it imports. */
export interface ConsumerProject {
  /** The consumer's `index.ts`. */
  source: string;
  /** Its tsconfig's `compilerOptions` (`include` is `index.ts`; `noEmit`, `types: ['node']` are added). */
  compilerOptions: Record<string, unknown>;
  /** Packages of the repository's node_modules the consumer imports itself (e.g. `fastify`); `switchyard` and `@types/node` are always there. */
  packages?: string[];
}

/**
 * Writes the consumer to a fresh temporary directory (removed by `t.after`) with `switchyard`
 * linked to the repository (its package.json `exports` and `types`, as a user resolves them), runs
 * tsc there (up to the test's own timeout) and resolves with the error lines about Switchyard's own
 * code or the consumer: errors inside other packages' declarations (fastify, pino …) are theirs.
 */
export async function typecheckConsumer(t: { after(fn: () => Promise<void>): void }, project: ConsumerProject): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'switchyard-types-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, 'node_modules', '@types'), { recursive: true });
  await symlink(REPO_ROOT, path.join(dir, 'node_modules', 'switchyard'), 'dir');
  for (const p of [...(project.packages ?? []), '@types/node'])
    await symlink(path.join(REPO_ROOT, 'node_modules', p), path.join(dir, 'node_modules', p), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await writeFile(path.join(dir, 'index.ts'), project.source);
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { ...project.compilerOptions, noEmit: true, types: ['node'] }, include: ['index.ts'] }),
  );
  const tsc = await run(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: dir,
    env: { ...process.env, ...NO_COVERAGE_ENV },
  }).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
  return ('failed' in tsc ? tsc.stdout : '').split('\n').filter((line) => line !== '' && !/node_modules[\\/](?!switchyard)/.test(line.split('(')[0]));
}
