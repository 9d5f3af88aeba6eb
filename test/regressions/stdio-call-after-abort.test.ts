// A call to a stdio upstream whose child was restarting waited for the restart to serve (up to
// upstreamStartTimeoutMs) and was then written to the child even when its client had given up
// (cancelled, or past its deadline) during that wait: the tool ran after its client had been told
// the request failed. Found by reading the stdio upstream's `request` beside the HTTP upstream's
// check before its POST (upstream-call-after-deadline.test.ts). The gateway's supervisor refuses
// calls while a child restarts, so the wait is met by a direct user of the stdio upstream.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { SwitchyardError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { RequestContext } from '../../src/core/request.js';
import { eraClients } from '../../src/gateway.js';
import { createStdioUpstream } from '../../src/upstreams/stdio/index.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const SERVER = path.join(REPO_ROOT, 'test/fixtures/slow-restart-server.mjs');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const call = (name: string, signal: AbortSignal): RequestContext => ({
  method: 'tools/call',
  params: { name, arguments: {} },
  protocolVersion: '2025-11-25',
  clientInfo: { name: 'test', version: '1' },
  clientCapabilities: {},
  logLevel: undefined,
  identity: null,
  signal,
  progressToken: undefined,
  onProgress: () => {},
  onLog: () => {},
  ask: undefined,
});

test('a call whose client gave up while its stdio child restarted stops waiting then, and is never sent to the child', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'swy-slow-restart-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'log');
  const up = createStdioUpstream({
    command: '',
    // The restarted child answers initialize 2.5 s after it is asked.
    argv: [process.execPath, SERVER, path.join(dir, 'marker'), log, '2500'],
    name: 'slow-restart',
    log: pino({ level: 'silent' }),
    limits: { ...DEFAULT_LIMITS, upstreamBackoffMinMs: 20, upstreamBackoffMaxMs: 20 },
    clientInfo: { name: 'switchyard', version: 'test' },
    eras: await eraClients(),
  });
  await up.start();
  t.after(() => up.close());
  const lines = async () => (await readFile(log, 'utf8')).split('\n').filter((l) => l !== '');

  await assert.rejects(up.request(call('die', new AbortController().signal)), { code: 'SWY_ERR_UPSTREAM_UNAVAILABLE' });
  // The child is restarting now: this call waits for it, and its client gives up 200 ms in.
  const ac = new AbortController();
  const deadline = new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: '200 ms' });
  setTimeout(() => ac.abort(deadline), 200);
  await assert.rejects(up.request(call('record', ac.signal)), (err) => err === deadline);
  // It stopped waiting when its client gave up, not when the restarted child came to serve.
  assert.ok(!(await lines()).includes('ready'), (await lines()).join(', '));

  // Once the restarted child serves, and a little after: the abandoned call never reached it.
  for (let i = 0; i < 100 && !(await lines()).includes('ready'); i++) await sleep(100);
  await sleep(300);
  const after = await lines();
  assert.deepEqual(after, ['server/discover', 'initialize', 'tools/call die', 'server/discover', 'initialize', 'ready']);
  // The child serves: a call now reaches it.
  const r = await up.request(call('record', new AbortController().signal));
  assert.deepEqual(r, { content: [{ type: 'text', text: 'recorded' }] });
  assert.deepEqual((await lines()).slice(6), ['tools/call record']);
});
