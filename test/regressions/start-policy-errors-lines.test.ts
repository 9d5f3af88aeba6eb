// Found rereading the start's refusals (2026-12-08): a config whose policy rules do not compile
// passes the loader's schema and is refused by the start, which compiles them; the start printed
// all of its errors on one line (`policy: 2 errors: A; B`), where the loader's refusal prints
// one line per error. The start now prints them as the loader does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/cli.js';
import { configFile } from '../helpers/ops.js';

test('start with --config: two policy rules that do not compile are printed one line each, and the start exits 1', (t) => {
  const file = configFile(t, {
    listen: { port: 0 },
    admin: false,
    policy: {
      default: 'allow',
      rules: [
        { name: 'cut', effect: 'deny', when: 'component.name ==' },
        { name: 'who', effect: 'deny', when: 'subject == "x"' },
      ],
    },
    upstreams: { demo: { transport: 'embedded' } },
  });
  const r = spawnSync(process.execPath, [CLI, '--config', file], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.status, 1);
  assert.equal(
    r.stderr,
    [
      'switchyard: Invalid configuration: policy: 2 errors',
      '  /policy/rules/0/when: Unexpected token: EOF (at character 18)',
      '  /policy/rules/1/when: Unknown variable: subject (at character 1)',
      '',
    ].join('\n'),
  );
});
