// Found by an operator trial: a stdio server slower to answer `initialize` than
// `upstreamStartTimeoutMs` (30 s; a first `npx -y` download easily takes longer) was killed at the
// bound, restarted, killed again, and so on for ever, each time logged as `no answer to initialize
// within 30000 ms`, which does not say that the bound is a setting. The operator's message (the
// log, `/readyz`, the CLI's start-failure line) now names `limits.upstreamStartTimeoutMs`; a
// client's message is as before.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { validateConfig } from '../../src/config/load.js';
import { operatorText, SwitchyardError } from '../../src/core/errors.js';
import { recordingLogger } from '../helpers/gateway.js';

/** A child that runs and never answers. */
const slow = { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] };

test('a stdio child that does not answer initialize in time: the operator is told which limit to raise', async (t) => {
  const config = (requireUpstreams: boolean) =>
    validateConfig(
      {
        listen: { host: '127.0.0.1', port: 0 },
        admin: false,
        requireUpstreams,
        limits: { upstreamStartTimeoutMs: 400, upstreamBackoffMinMs: 60000, upstreamBackoffMaxMs: 60000 },
        upstreams: { slow },
      },
      'test',
      { expandEnv: false },
    );
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config(false), recordingLogger(records));
  t.after(() => gw.close());
  assert.equal(
    records.find((r) => r.msg === 'upstream down')?.err,
    'Upstream unavailable: no answer to initialize within 400 ms (limits.upstreamStartTimeoutMs; raise it for a server slow to start)',
  );
  const failed = await startGatewayFromConfig(config(true), recordingLogger([])).then(
    async (g) => {
      await g.close();
      return assert.fail('the start succeeded');
    },
    (e: unknown) => e,
  );
  assert.ok(failed instanceof SwitchyardError);
  assert.equal(failed.message, 'Upstream unavailable: no answer to initialize within 400 ms (upstream slow)');
  assert.equal(
    operatorText(failed),
    'Upstream unavailable: no answer to initialize within 400 ms (limits.upstreamStartTimeoutMs; raise it for a server slow to start) (upstream slow)',
  );
});
