// Found by a fresh-operator trial of docs/operations.md ("Tracing"): with
// SWITCHYARD_TRACES_EXPORTER=drop the gateway traced every request but logged nothing about it,
// so an operator could not tell from the start-up lines that tracing was on (and costing CPU),
// nor, with an OTLP endpoint set as well, that nothing would be exported to it. The `tracing on`
// line came only with an endpoint. It now also comes with the drop exporter, saying so.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCli } from '../helpers/cli.js';

const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of Object.keys(e)) if (k.startsWith('OTEL_') && !(k in extra)) delete e[k];
  return e;
};

test('SWITCHYARD_TRACES_EXPORTER=drop: the start logs `tracing on` with exporter drop and no endpoint', async (t) => {
  const cli = await startCli(t, ['--no-admin'], env({ SWITCHYARD_TRACES_EXPORTER: 'drop' }));
  const on = cli.records().filter((r) => r.msg === 'tracing on');
  assert.equal(on.length, 1, cli.stderr());
  assert.equal(on[0].exporter, 'drop');
  assert.equal(on[0].endpoint, undefined);
  await cli.stop();
});

test('SWITCHYARD_TRACES_EXPORTER=drop with an OTLP endpoint set: the line says drop, and the endpoint is not named as a destination', async (t) => {
  const cli = await startCli(t, ['--no-admin'], env({ SWITCHYARD_TRACES_EXPORTER: 'drop', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }));
  const on = cli.records().filter((r) => r.msg === 'tracing on');
  assert.equal(on.length, 1, cli.stderr());
  assert.equal(on[0].exporter, 'drop');
  assert.equal(on[0].endpoint, undefined);
  await cli.stop();
});

test('with an endpoint and the default exporter the line names the endpoint origin and exporter otlp', async (t) => {
  const cli = await startCli(t, ['--no-admin'], env({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }));
  const on = cli.records().filter((r) => r.msg === 'tracing on');
  assert.equal(on.length, 1, cli.stderr());
  assert.equal(on[0].endpoint, 'http://127.0.0.1:9');
  assert.equal(on[0].exporter, 'otlp');
  await cli.stop();
});
