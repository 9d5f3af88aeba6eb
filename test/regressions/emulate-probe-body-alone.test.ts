// Regression (a known defect left open, fixed by h-small): `switchyard emulate --probe-body`
// without `--probe-status` is a usage error, since the body shapes that status's answer and alone
// changes nothing; the library's `startEmulator({ probeBody })` without `probeStatus` started all
// the same and silently ignored it. It now throws SWY_ERR_CONFIG_INVALID before binding anything.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { startEmulator } from '../../src/emulate/index.js';
import { H2025, post } from '../helpers/http.js';

test('startEmulator with probeBody and no probeStatus rejects with SWY_ERR_CONFIG_INVALID', async () => {
  let err: unknown;
  try {
    // An emulator that starts anyway is closed, so that the failure is an assertion, not a hang.
    await (await startEmulator({ era: '2025-11-25', host: '127.0.0.1', port: 0, probeBody: 'html', logLevel: 'silent' })).close();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof SwitchyardError, 'startEmulator did not reject');
  assert.equal(err.code, 'SWY_ERR_CONFIG_INVALID');
  assert.equal(err.message, 'Invalid configuration: probeBody needs probeStatus (it is the body of that answer)');
});

test('startEmulator with probeBody and probeStatus starts, and the first POST gets that body', async (t) => {
  const emu = await startEmulator({ era: '2025-11-25', host: '127.0.0.1', port: 0, probeStatus: 404, probeBody: 'empty', logLevel: 'silent' });
  t.after(() => emu.close());
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const r = await post(emu.url, init, { ...H2025 });
  assert.deepEqual([r.status, r.text], [404, '']);
});

// The CLI's other cross-checks were not the library's either: `endpoint` or `endpointDelayMs`
// outside 2024-11-05, and `sessionExpireAfter` with 2026-07-28, were accepted and ignored.
test('startEmulator refuses the options its era would ignore, as the CLI does', async () => {
  const cases = [
    [{ era: '2025-11-25', endpoint: 'absolute' }, 'endpoint (other than the default, relative) and endpointDelayMs apply to era 2024-11-05 only'],
    [{ era: '2026-07-28', endpointDelayMs: 100 }, 'endpoint (other than the default, relative) and endpointDelayMs apply to era 2024-11-05 only'],
    [{ era: '2026-07-28', sessionExpireAfter: 2 }, 'sessionExpireAfter needs a sessionful era (2026-07-28 has no sessions)'],
  ] as const;
  for (const [opts, detail] of cases) {
    let err: unknown;
    try {
      await (await startEmulator({ host: '127.0.0.1', port: 0, logLevel: 'silent', ...opts })).close();
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof SwitchyardError, `${JSON.stringify(opts)}: startEmulator did not reject`);
    assert.equal(err.message, `Invalid configuration: ${detail}`);
  }
  // The default endpoint mode, which the CLI passes for every era, is no refusal.
  const emu = await startEmulator({ era: '2025-11-25', host: '127.0.0.1', port: 0, logLevel: 'silent', endpoint: 'relative', sessionExpireAfter: 3 });
  await emu.close();
});
