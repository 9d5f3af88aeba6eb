// Regression (found by an operator's trial of tracing): an OTEL_EXPORTER_OTLP_HEADERS value that
// is not `key=value` pairs (`Authorization: Bearer …`, the HTTP form people paste; a bad percent
// escape) was dropped without a word, so every export went out without the collector's credential,
// although docs/operations.md says a value that cannot be honoured fails the start with
// SWY_ERR_TELEMETRY_CONFIG naming the variable. The value is a secret and is never printed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { SwitchyardError } from '../../src/core/errors.js';
import { tracingConfigFromEnv } from '../../src/telemetry/tracing.js';
import { CLI } from '../helpers/cli.js';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };

test('a malformed OTLP headers variable fails the start, naming the variable and not the value', () => {
  const run = spawnSync(process.execPath, [CLI, '--port', '0', '--no-admin'], {
    env: { ...process.env, ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'Authorization: Bearer s3cr3t-token' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /SWY_ERR_TELEMETRY_CONFIG: Invalid telemetry configuration: OTEL_EXPORTER_OTLP_HEADERS must be/);
  assert.ok(!run.stderr.includes('s3cr3t'));
});

test('each malformed form is refused by the variable that holds it; well-formed ones pass', () => {
  const refused: Array<[string, string]> = [
    ['OTEL_EXPORTER_OTLP_HEADERS', 'authorization Bearer x'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'authorization=Bearer%ZZx'],
    ['OTEL_EXPORTER_OTLP_HEADERS', '=x'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'bad key=x'],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'a=b%0D%0Ax-injected: 1'],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'a=b,c'],
  ];
  for (const [name, value] of refused)
    assert.throws(
      () => tracingConfigFromEnv({ ...ENDPOINT, [name]: value }),
      (e: unknown) =>
        e instanceof SwitchyardError && e.code === 'SWY_ERR_TELEMETRY_CONFIG' && e.message.includes(`${name} must be`) && !e.message.includes(value),
      `${name}=${value}`,
    );
  for (const value of ['authorization=Bearer%20x,x-tenant=acme', ' a = b , c=d ', 'a=b,', ''])
    assert.equal(tracingConfigFromEnv({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: value })!.headers, value, value);
});
