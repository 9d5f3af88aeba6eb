// Found by an SRE trial (helper h-obs, 2026-12-05): an upstream that stays down wrote `upstream
// reconnecting` (info) and `upstream reconnect failed` (warn) at every attempt: two lines every
// 10 s at the default backoff cap, about 700 an hour, for as long as it stayed down. Now the first
// three attempts of an outage are logged at their level, then every 60th; the others at debug.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configGateway } from '../helpers/ops.js';
import { freePort } from '../helpers/servers.js';

const levelOf = (r: Record<string, unknown>) => r.level as number;
const INFO = 30;
const WARN = 40;
const DEBUG = 20;

test('an upstream that stays down logs its first three reconnect attempts at info and warn, the next ones at debug', async (t) => {
  // Nothing listens on this port: every attempt fails at once.
  const port = await freePort();
  const gw = await configGateway(t, {
    limits: { upstreamBackoffMinMs: 5, upstreamBackoffMaxMs: 10 },
    upstreams: { gone: { url: `http://127.0.0.1:${port}/mcp`, optional: true } },
  });
  const failed = () => gw.records.filter((r) => r.msg === 'upstream reconnect failed');
  for (let i = 0; i < 200 && failed().length < 20; i++) await new Promise((r) => setTimeout(r, 25));
  const fails = failed();
  assert.ok(fails.length >= 20, `20 attempts made (${fails.length})`);
  assert.deepEqual(
    fails.slice(0, 20).map((r) => [r.attempt, levelOf(r)]),
    Array.from({ length: 20 }, (_, i) => [i + 1, i < 3 ? WARN : DEBUG]),
  );
  const scheduled = gw.records.filter((r) => r.msg === 'upstream reconnecting').slice(0, 20);
  assert.deepEqual(
    scheduled.map((r) => [r.attempt, levelOf(r)]),
    Array.from({ length: 20 }, (_, i) => [i + 1, i < 3 ? INFO : DEBUG]),
  );
});
