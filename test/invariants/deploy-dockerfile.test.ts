// deploy/Dockerfile: multi-stage (build with dev dependencies, run with production ones only),
// non-root, `node dist/src/cli/main.js`; what it copies exists, and what the image runs imports
// only production dependencies. Docker cannot run on the test machine, so this reads the file.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

interface Stage {
  from: string;
  name: string | undefined;
  lines: Array<{ op: string; args: string }>;
}

/** The Dockerfile as stages of instructions (comments dropped, continuation lines joined). */
function stages(): Stage[] {
  const text = readFileSync(path.join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const out: Stage[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    assert.ok(m, `not an instruction: ${line}`);
    const [, op, args] = m;
    if (op === 'FROM') {
      const f = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args)!;
      out.push({ from: f[1], name: f[2], lines: [] });
    } else if (op !== 'ARG' || out.length > 0) out.at(-1)!.lines.push({ op, args });
  }
  return out;
}

const runs = (s: Stage) => s.lines.filter((l) => l.op === 'RUN').map((l) => l.args);

test('multi-stage: a build stage with dev dependencies compiles; the run stage gets production dependencies only', () => {
  const all = stages();
  assert.ok(all.length >= 2);
  const build = all.find((s) => s.name === 'build')!;
  assert.ok(build);
  assert.ok(
    runs(build).some((r) => /^npm ci\b/.test(r) && !r.includes('--omit=dev')),
    'build installs dev dependencies',
  );
  assert.ok(runs(build).some((r) => /tsc -p tsconfig\.json/.test(r)));
  const run = all.at(-1)!;
  assert.notEqual(run, build);
  // The run stage's node_modules come from a stage that installed with --omit=dev, and nothing else installs there.
  const nm = run.lines.find((l) => l.op === 'COPY' && /\/node_modules\s/.test(l.args))!;
  const from = /--from=(\S+)/.exec(nm.args)![1];
  const deps = all.find((s) => s.name === from)!;
  assert.ok(runs(deps).some((r) => /npm ci\b.*--omit=dev/.test(r)));
  assert.equal(
    runs(run).some((r) => /npm (ci|install)/.test(r)),
    false,
  );
  // Every stage starts from the same Node major as package.json's engines (>=20).
  for (const s of all) assert.match(s.from, /^node:\$\{NODE_VERSION\}-bookworm-slim$/);
  assert.match(readFileSync(path.join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8'), /^ARG NODE_VERSION=20$/m);
});

test('the run stage: non-root user, ports 7600 and 7601, entry point node dist/src/cli/main.js', () => {
  const run = stages().at(-1)!;
  const user = run.lines.filter((l) => l.op === 'USER').at(-1);
  assert.ok(user && !/^(root|0)(:|$)/.test(user.args), 'a non-root USER');
  const expose = run.lines.filter((l) => l.op === 'EXPOSE').flatMap((l) => l.args.split(/\s+/));
  assert.deepEqual(expose, ['7600', '7601']);
  const entry = run.lines.find((l) => l.op === 'ENTRYPOINT')!;
  assert.deepEqual(JSON.parse(entry.args), ['node', 'dist/src/cli/main.js']);
  const cmd = run.lines.find((l) => l.op === 'CMD')!;
  assert.deepEqual(JSON.parse(cmd.args), ['--config', '/etc/switchyard/switchyard.yaml']);
  // The entry point is what tsc emits for the CLI (the test suite runs from that same dist/).
  assert.ok(existsSync(path.join(REPO_ROOT, 'dist/src/cli/main.js')));
});

test('everything the Dockerfile copies from the context exists and is not excluded by its .dockerignore', () => {
  const ignore = readFileSync(path.join(REPO_ROOT, 'deploy/Dockerfile.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const excluded = (p: string) => {
    let out = false;
    for (const rule of ignore) {
      const neg = rule.startsWith('!');
      const pat = (neg ? rule.slice(1) : rule).replace(/^\*\*\//, '');
      if (p === pat || p.startsWith(`${pat}/`) || p.split('/').includes(pat)) out = !neg;
    }
    return out;
  };
  const copied: string[] = [];
  for (const s of stages())
    for (const l of s.lines)
      if (l.op === 'COPY' && !l.args.includes('--from=')) {
        const parts = l.args.split(/\s+/);
        copied.push(...parts.slice(0, -1));
      }
  assert.deepEqual(copied.sort(), [
    'dialects',
    'package-lock.json',
    'package-lock.json',
    'package.json',
    'package.json',
    'package.json',
    'src',
    'tsconfig.json',
  ]);
  for (const p of copied) {
    assert.ok(existsSync(path.join(REPO_ROOT, p)), p);
    assert.equal(excluded(p), false, `${p} is excluded from the build context`);
  }
  for (const p of ['node_modules', 'dist', '.git', 'test/unit']) assert.equal(excluded(p), true, p);
});

test('the code the image runs imports only packages in "dependencies" (the run stage has no dev dependencies)', () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  const missing = new Set<string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.js'))
        for (const m of readFileSync(p, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^'.][^']*)'|import\('([^'.][^']*)'\)/g)) {
          const spec = m[1] ?? m[2];
          if (builtins.has(spec)) continue;
          const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
          if (!Object.hasOwn(pkg.dependencies, name)) missing.add(`${path.relative(REPO_ROOT, p)}: ${name}`);
        }
    }
  };
  walk(path.join(REPO_ROOT, 'dist/src'));
  walk(path.join(REPO_ROOT, 'dist/dialects'));
  assert.deepEqual([...missing], []);
});
