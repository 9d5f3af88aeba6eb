#!/usr/bin/env node
// Builds dist/ with tsc only when a runtime source is newer than the last good build, so that
// `npm start` costs a few stat calls when nothing changed (`npm run build` always builds).
//
// The stamp dist/.build-stamp holds the newest input time a build that tsc finished without
// errors started from; it is removed when a build fails, so a broken build is never taken for a
// fresh one. Inputs: every file
// under src/ and dialects/ (TypeScript and the JSON schemas tsc copies), tsconfig.json and
// package.json. Tests are not inputs: `npm start` does not run them (`npm test` builds itself).

import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

// `--root DIR` builds another checkout (the tests use a small one); default: this repository.
const at = process.argv.indexOf('--root');
const root = at > 0 ? path.resolve(process.argv[at + 1]) : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');

/** The newest modification time under `dir` (recursively), ms; 0 when it does not exist. */
function newest(dir) {
  let max = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) max = Math.max(max, newest(p));
    else if (e.isFile()) max = Math.max(max, statSync(p).mtimeMs);
  }
  // A deleted or renamed file changes its directory's time.
  return Math.max(max, statSync(dir).mtimeMs);
}

function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

const inputs = Math.max(
  newest(path.join(root, 'src')),
  newest(path.join(root, 'dialects')),
  mtime(path.join(root, 'tsconfig.json')),
  mtime(path.join(root, 'package.json')),
);
let built = -1;
try {
  built = Number(readFileSync(stamp, 'utf8'));
} catch {
  // no stamp: never built, or the last build failed
}
// The config validator as standalone code (src/config/build-validator.ts), where the checkout has
// it, and its V8 code cache: written after tsc, and again when a build is current but either file
// has gone missing or the cache is of another Node (or other V8 flags).
const generator = path.join(root, 'dist', 'src', 'config', 'build-validator.js');
const generated = path.join(root, 'dist', 'src', 'config', 'config-validator.generated.cjs');
const generatedCache = `${generated}.v8cache`;
function generate() {
  if (!existsSync(generator)) return;
  // With this process's V8 flags: the cache is checked against them below (cacheOfOtherV8).
  const g = spawnSync(process.execPath, [...process.execArgv, generator], { stdio: 'inherit', cwd: root });
  if (g.status !== 0) process.exit(g.status ?? 1);
  for (const file of [generated, generatedCache])
    if (!existsSync(file)) {
      process.stderr.write(`build-if-stale: ${generator} wrote no ${file}\n`);
      process.exit(1);
    }
}
// The package's bin files (package.json `bin`) as executables: tsc writes them 0644, and
// `npx switchyard` in a clone runs the file itself (npm makes bins executable only when it
// installs the package as a dependency). Done on every run, built or not: a checkout built
// before this step existed gets it too.
function binMode() {
  let bin;
  try {
    bin = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).bin;
  } catch {
    return;
  }
  const files = typeof bin === 'string' ? [bin] : Object.values(bin ?? {});
  for (const f of files) {
    const p = path.join(root, f);
    if (existsSync(p) && (statSync(p).mode & 0o111) !== 0o111) chmodSync(p, statSync(p).mode | 0o111);
  }
}
/**
 * True when the code cache was made by another V8 (a Node upgrade since the build) or under other
 * V8 flags: V8 would refuse it at every start, and the validator would be compiled from source
 * each time (the cost the cache saves) until the next build. Read from V8's cache header, after
 * the 32-byte SHA-256 frame: the magic number and version hash (bytes 0-8) and the flag hash
 * (12-16), compared with a cache this process makes. Checked only when two caches of this V8 agree
 * there, so that another header layout never makes every start rebuild it.
 */
function cacheOfOtherV8() {
  const head = Buffer.alloc(32 + 16);
  let fd;
  try {
    fd = openSync(generatedCache, 'r');
    if (readSync(fd, head, 0, head.length, 0) < head.length) return false;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const same = (a, b) => a.subarray(0, 8).equals(b.subarray(0, 8)) && a.subarray(12, 16).equals(b.subarray(12, 16));
  const mine = new Script('0').createCachedData();
  if (!same(mine, new Script('function f() {}; f()').createCachedData())) return false;
  return !same(mine, head.subarray(32));
}
if (built >= inputs && !process.argv.includes('--force')) {
  if (!existsSync(generated) || !existsSync(generatedCache)) generate();
  else if (existsSync(generator) && cacheOfOtherV8()) {
    // Only a start's speed is at stake: a checkout that cannot be written (or a generator that
    // fails) still starts, V8 refusing the old cache and the validator compiled from source.
    const g = spawnSync(process.execPath, [...process.execArgv, generator], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', cwd: root });
    if (g.status !== 0) {
      const why =
        (g.stderr ?? '')
          .split('\n')
          .map((l) => l.trim())
          .find((l) => /^[A-Za-z]*Error\b/.test(l)) ?? `exit ${g.status}`;
      process.stderr.write(
        `build-if-stale: the config validator's code cache is of another Node and could not be written again (${why}); starting without it\n`,
      );
    }
  }
  binMode();
  process.exit(0);
}

rmSync(stamp, { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], { stdio: 'inherit', cwd: root });
if (r.status !== 0) process.exit(r.status ?? 1);
generate();
binMode();
mkdirSync(path.dirname(stamp), { recursive: true });
// The inputs' time as read before the build: a file saved during the build is newer.
writeFileSync(stamp, String(inputs));
