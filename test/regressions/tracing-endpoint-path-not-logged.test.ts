// Found by a review of the start-up lines: `tracing on` logged the OTLP endpoint's origin and
// path. Some collectors take their key as a path segment (`…/v1/keys/<key>/traces`), so the
// line handed that key to anyone who reads the log. It now names the origin only and says the
// path was withheld.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';

const SECRET = 'pathkey-7f3a9c1e5b';

test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT with a key in its path: `tracing on` names the origin, not the path', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:9/v1/keys/${SECRET}/traces` };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') && k !== 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') delete env[k];
  const cli = await startCli(t, ['--no-admin'], env);
  const on = cli.records().filter((r) => r.msg === 'tracing on');
  assert.equal(on.length, 1, cli.stderr());
  assert.equal(on[0].exporter, 'otlp');
  assert.equal(on[0].endpoint, 'http://127.0.0.1:9');
  assert.equal(on[0].pathWithheld, true);
  assert.equal(await cli.stop(), 0);
  assert.ok(!cli.stderr().includes(SECRET), cli.stderr());
  assert.ok(!cli.stdout().includes(SECRET));
});
