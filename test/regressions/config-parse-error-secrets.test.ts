// Regression (found by h-secrets): a config file that did not parse had its text quoted in the
// error. V8's JSON.parse message quotes about 20 characters around the fault (`Unexpected token
// 'S', ..."Api-Key": SK_LIVE_…"... is not valid JSON`), and a value left unquoted is exactly a
// secret's place; the yaml package names an unresolved alias, which is what `password: *hunter2`
// reads as. Both reached `switchyard validate`, the start's failure line and the `config reload
// refused` log line. The fault is now named by line and column only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { startCli } from '../helpers/cli.js';
import { validateFile } from '../helpers/cli.js';
import { configFile } from '../helpers/ops.js';

const SECRET = 'SK_LIVE_PLANTED_7f3a9c';

test('an unquoted secret in a JSON config: validate names line and column, not the text around it', async (t) => {
  const text = `{\n  "upstreams": {\n    "a": { "url": "http://127.0.0.1:1/mcp", "headers": { "X-Api-Key": ${SECRET} } }\n  }\n}\n`;
  const r = await validateFile(t, 'c.json', text);
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    `${r.file}: invalid config, 1 error\n  (file): not valid JSON: unexpected character at line 3, column 71 (a value not written as JSON: strings need double quotes)\n`,
  );
  const quoted = await validateFile(t, 'q.json', `{"upstreams": {"a": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-Api-Key": '${SECRET}'}}}}`);
  assert.equal(quoted.code, 1);
  assert.match(quoted.stdout, /not valid JSON: unexpected "'" at line 1, column 80 /);
  assert.doesNotMatch(quoted.stdout, /PLANTED/);
});

test('a YAML value that starts with * (read as an alias) is not named in the error', async (t) => {
  const r = await validateFile(t, 'c.yaml', `upstreams:\n  a:\n    url: http://127.0.0.1:1/mcp\n    headers:\n      X-Api-Key: *${SECRET}\n`);
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    `${r.file}: invalid config, 1 error\n  (file): not valid YAML: Unresolved alias (the anchor must be set before the alias): a value that starts with * must be quoted\n`,
  );
});

test('a reload to a JSON file with an unquoted secret logs where the fault is, not the secret', async (t) => {
  const file = configFile(t, { upstreams: { demo: { transport: 'embedded' } } });
  const gw = await startCli(t, ['--config', file, '--no-admin']);
  writeFileSync(file, `{"upstreams": {"demo": {"transport": "embedded", "description": ${SECRET}}}}`);
  gw.child.kill('SIGHUP');
  for (let i = 0; i < 100 && !gw.records().some((r) => r.msg === 'config reload failed; the running config stays'); i++)
    await new Promise((r) => setTimeout(r, 50));
  const refused = gw.records().find((r) => r.msg === 'config reload refused');
  assert.equal(refused?.problem, 'not valid JSON: unexpected character at line 1, column 65 (a value not written as JSON: strings need double quotes)');
  assert.doesNotMatch(gw.stderr(), /PLANTED/);
  assert.equal(await gw.stop(), 0);
});
