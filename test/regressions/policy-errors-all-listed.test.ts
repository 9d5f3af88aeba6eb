// Found by a fresh-operator trial of hot reload: a config whose top-level policy rule, an
// upstream's own policy rule, an upstream's rate limit names and its curation renames were all
// wrong was refused with only the first failing place (`config reload refused` once, and
// `switchyard validate` listed one error), though docs/operations.md ("Hot reload") and
// docs/policy.md ("Reloading") say every failing place is listed. createPolicyWiring threw at
// the first compile that failed; it now compiles every part and lists all their errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../helpers/gateway.js';

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

const CONFIG = `
policy:
  default: allow
  rules:
    - name: top
      effect: deny
      when: 'component.nme == "x"'
upstreams:
  a:
    url: http://127.0.0.1:9/mcp
    policy:
      default: allow
      rules:
        - name: own
          effect: deny
          when: 'principal.subject == ""'
    rateLimits:
      - { name: l, per: principal, ratePerSec: 1, burst: 1 }
      - { name: l, per: principal, ratePerSec: 2, burst: 2 }
    tools:
      rename: { one: same, two: same }
`;

test('switchyard validate lists every failing place of the policy keys, not only the first', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-policy-errors-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'c.yaml');
  writeFileSync(file, CONFIG);
  await assert.rejects(run(process.execPath, [CLI, 'validate', file]), (err: { code: number; stdout: string; stderr: string }) => {
    assert.equal(err.code, 1);
    const out = err.stdout + err.stderr;
    assert.match(out, /invalid config, 4 errors/);
    for (const p of ['/policy/rules/0/when', '/upstreams/a/policy/rules/0/when', '/upstreams/a/rateLimits/1/name', '/upstreams/a/tools/rename/two']) {
      assert.ok(out.includes(p), `${p} listed in:\n${out}`);
    }
    return true;
  });
});
