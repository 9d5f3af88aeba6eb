// Found by an operator trial: in a library gateway with `requireUpstreams`, a stdio child that died
// at start put its last stderr line into the error every later request was answered with
// (`Upstream unavailable: child exited during start (3); last stderr line: token=… rejected
// (upstream s)`), through fetch, the Node handler and the plugin alike. A child's stderr is for
// operators (basic/transports#stdio: stderr is for logging): the client's error names the
// upstream and the failure, the log, `lastError` and the CLI's start-failure line keep the line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { validateConfig } from '../../src/config/load.js';
import { startFailureText } from '../../src/cli/start-failure.js';
import { operatorText, SwitchyardError } from '../../src/core/errors.js';
import { recordingLogger } from '../helpers/gateway.js';
import { modernBody, modernHeaders } from '../helpers/http.js';
import { modernRequest, switchyard } from '../helpers/library.js';

const SECRET = 'sk-live-0123456789';
/** A stdio child that says why it cannot start, with a credential, on stderr and exits 3. */
const dying = { command: process.execPath, args: ['-e', `process.stderr.write('token=${SECRET} rejected\\n'); process.exit(3)`] };
const PUBLIC = 'Upstream unavailable: child exited during start (3) (upstream s)';
const OPERATOR = `Upstream unavailable: child exited during start (3); last stderr line: token=${SECRET} rejected (upstream s)`;

test('library with requireUpstreams: no client sees the dead child stderr line (fetch, Node handler, plugin, 2025 and 2026 eras); ready() and the log keep it', async (t) => {
  const sy = switchyard(t, { requireUpstreams: true, upstreams: { s: dying } });
  const err = await sy.ready().then(
    () => assert.fail('ready() resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SwitchyardError);
  assert.deepEqual([err.code, err.message, operatorText(err)], ['SWY_ERR_UPSTREAM_UNAVAILABLE', PUBLIC, OPERATOR]);
  const logged = sy.records.filter((r) => r.msg === 'start failed');
  assert.deepEqual(
    logged.map((r) => [r.level, r.code, r.err]),
    [[50, 'SWY_ERR_UPSTREAM_UNAVAILABLE', OPERATOR]],
  );

  const server = http.createServer((req, res) => void sy.handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const nodeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s/mcp`;
  const sy2 = switchyard(t, { requireUpstreams: true, upstreams: { s: dying } });
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy2.plugin);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const pluginUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/s/mcp`;

  const legacy = {
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  };
  const modern = { headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(7, 'tools/list')) };
  const answers: Array<[string, number, string]> = [];
  const f = await sy.fetch(modernRequest('tools/list', {}, { url: 'http://127.0.0.1/s/mcp', id: 7 }));
  answers.push(['fetch 2026', f.status, await f.text()]);
  const f2 = await sy.fetch(new Request('http://127.0.0.1/s/mcp', { method: 'POST', ...legacy }));
  answers.push(['fetch 2025', f2.status, await f2.text()]);
  for (const [name, url] of [
    ['node', nodeUrl],
    ['plugin', pluginUrl],
  ] as const) {
    for (const [era, o] of [
      ['2026', modern],
      ['2025', legacy],
    ] as const) {
      const r = await fetch(url, { method: 'POST', ...o });
      answers.push([`${name} ${era}`, r.status, await r.text()]);
    }
  }
  for (const [where, status, text] of answers) {
    assert.equal(status, 502, where);
    assert.ok(!text.includes(SECRET) && !text.includes('stderr'), `${where}: ${text}`);
    const body = JSON.parse(text) as { error: unknown };
    assert.deepEqual(body.error, { code: -32000, message: PUBLIC }, where);
  }
});

test('CLI gateway: a child that dies at start with a stderr line is down for clients without it; the log and the start-failure line keep it', async (t) => {
  const config = (requireUpstreams: boolean) =>
    validateConfig({ listen: { host: '127.0.0.1', port: 0 }, admin: false, requireUpstreams, upstreams: { s: dying } }, 'test', { expandEnv: false });
  const records: Array<Record<string, unknown>> = [];
  const gw = await startGatewayFromConfig(config(false), recordingLogger(records));
  t.after(() => gw.close());
  const r = await fetch(gw.urls[0], { method: 'POST', headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(7, 'tools/list')) });
  const text = await r.text();
  assert.equal(r.status, 503);
  assert.ok(!text.includes(SECRET), text);
  assert.equal((JSON.parse(text) as { error: { message: string } }).error.message, 'Upstream down: s is reconnecting');
  const down = records.find((x) => x.msg === 'upstream down');
  assert.equal(down?.err, `Upstream unavailable: child exited during start (3); last stderr line: token=${SECRET} rejected`);

  const failed = await startGatewayFromConfig(config(true), recordingLogger([])).then(
    async (g) => {
      await g.close();
      return assert.fail('the start succeeded');
    },
    (e: unknown) => e,
  );
  assert.equal(startFailureText(failed, {}), `SWY_ERR_UPSTREAM_UNAVAILABLE: ${OPERATOR}`);
});
