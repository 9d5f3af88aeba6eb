// Regression (found by an operator's trial of hot reload): a reload that kept a running upstream
// because its new settings did not start left the new settings' labels on the running one's
// metrics. The new instance's lifecycle messages (`upstream starting` with the new URL's
// `server_address`/`server_port`, or `tcp` for a stdio child changed to a `url`) replaced what the
// metrics and spans knew of the upstream by name, so every later call of the kept upstream (still
// the old URL, or still the stdio child) was counted under the address it was not using.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { post } from '../helpers/http.js';
import { startOpsCli } from '../helpers/ops-cli.js';
import { configFile, find, freePort, getText, openSession, opsHttp, RAW_SERVER } from '../helpers/ops.js';

const OPS = 'mcp_client_operation_duration_seconds_count';

test('a kept upstream keeps its own labels on the client-operation metrics', async (t) => {
  const web = await opsHttp(t);
  const kid = { command: process.execPath, args: [RAW_SERVER, 'stdio'] };
  const configOf = (upstreams: Record<string, unknown>) => ({ listen: { port: 0 }, admin: { port: 0 }, upstreams });
  const file = configFile(t, configOf({ web: { url: web.url }, kid }));
  const cli = await startOpsCli(t, ['--config', file]);
  const webPort = new URL(web.url).port;

  const sessions = { web: (await openSession(cli.urls.web)).headers, kid: (await openSession(cli.urls.kid)).headers };
  const echo = (name: 'web' | 'kid', id: number) =>
    post(cli.urls[name], { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } }, sessions[name]);

  // One call each before the reload: the series every later call must add to.
  assert.equal((await echo('web', 0)).status, 200);
  assert.equal((await echo('kid', 0)).status, 200);

  // Both upstreams changed to a URL where nothing listens: both are kept.
  const nowhere = `http://127.0.0.1:${await freePort()}/mcp`;
  const from = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf({ web: { url: nowhere }, kid: { url: nowhere } })));
  cli.child.kill('SIGHUP');
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual([...(reloaded.kept as string[])].sort(), ['kid', 'web']);

  // Calls after the reload, through the kept upstreams, go to the same series (revision included).
  for (let id = 1; id <= 3; id++) {
    assert.equal((await echo('web', id)).status, 200);
    assert.equal((await echo('kid', id)).status, 200);
  }
  const metrics = (await getText(new URL('/metrics', cli.admin).href)).text;
  const web3 = find(metrics, OPS, { upstream: 'web', mcp_method_name: 'tools/call' });
  assert.deepEqual(
    web3.map((s) => [s.labels.network_transport, s.labels.server_address, s.labels.server_port, s.value]),
    [['tcp', '127.0.0.1', webPort, 4]],
  );
  const kid3 = find(metrics, OPS, { upstream: 'kid', mcp_method_name: 'tools/call' });
  assert.deepEqual(
    kid3.map((s) => [s.labels.network_transport, s.labels.server_address, s.labels.server_port, s.value]),
    [['pipe', undefined, undefined, 4]],
  );
  assert.equal(await cli.stop(), 0);
});

// The same, the other way round: a reload that changed a stdio child to an HTTP URL stopped the
// child after the new upstream was up, and the child's last lifecycle message (`down`, transport
// stdio) gave the new HTTP upstream's calls `network_transport="pipe"` and no address.
test('an upstream a reload changed from a stdio child to a URL carries its URL on its metrics', async (t) => {
  const web = await opsHttp(t);
  const configOf = (swap: Record<string, unknown>) => ({ listen: { port: 0 }, admin: { port: 0 }, upstreams: { swap } });
  const file = configFile(t, configOf({ command: process.execPath, args: [RAW_SERVER, 'stdio'] }));
  const cli = await startOpsCli(t, ['--config', file]);

  const from = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf({ url: web.url })));
  cli.child.kill('SIGHUP');
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual(reloaded.changed, ['swap']);

  const session = (await openSession(cli.url)).headers;
  const call = await post(cli.url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'm' } } }, session);
  assert.equal(call.status, 200);
  const metrics = (await getText(new URL('/metrics', cli.admin).href)).text;
  assert.deepEqual(
    find(metrics, OPS, { upstream: 'swap', mcp_method_name: 'tools/call' }).map((s) => [
      s.labels.network_transport,
      s.labels.server_address,
      s.labels.server_port,
      s.value,
    ]),
    [['tcp', '127.0.0.1', new URL(web.url).port, 1]],
  );
  assert.equal(await cli.stop(), 0);
});

// While the new instance is still starting (an HTTP URL that accepts and never answers holds it
// for its start's timeout), the running child keeps serving, and its calls were counted under the
// new instance's labels (`tcp` and the URL's address) until the reload had decided: the new
// instance's lifecycle messages are now held back until then (runtime Entry.muted).
test('while a changed upstream’s new instance is still starting, the running one’s calls keep its own labels', async (t) => {
  let connected!: () => void;
  const reached = new Promise<void>((resolve) => (connected = resolve));
  const hang = net.createServer((socket) => {
    socket.on('error', () => {});
    connected();
  });
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    hang.close();
  });
  const hangUrl = `http://127.0.0.1:${(hang.address() as net.AddressInfo).port}/mcp`;
  const configOf = (kid: Record<string, unknown>) => ({ listen: { port: 0 }, admin: { port: 0 }, upstreams: { kid } });
  const file = configFile(t, configOf({ command: process.execPath, args: [RAW_SERVER, 'stdio'] }));
  const cli = await startOpsCli(t, ['--config', file]);
  const session = (await openSession(cli.url)).headers;
  const echo = (id: number) => post(cli.url, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${id}` } } }, session);
  assert.equal((await echo(0)).status, 200);

  const from = cli.records.length;
  writeFileSync(file, JSON.stringify(configOf({ url: hangUrl, limits: { upstreamRequestTimeoutMs: 2000, upstreamProbeTimeoutMs: 2000 } })));
  cli.child.kill('SIGHUP');
  // The new instance is connecting (the hanging server has its connection); the reload has not decided.
  await reached;
  assert.equal(
    cli.records.slice(from).some((r) => r.msg === 'config reloaded'),
    false,
    'the reload is still waiting for the new instance',
  );
  for (let id = 1; id <= 2; id++) assert.equal((await echo(id)).status, 200);
  const during = (await getText(new URL('/metrics', cli.admin).href)).text;
  assert.deepEqual(
    find(during, OPS, { upstream: 'kid', mcp_method_name: 'tools/call' }).map((s) => [s.labels.network_transport, s.labels.server_address, s.value]),
    [['pipe', undefined, 3]],
  );
  const reloaded = await cli.waitFor((r) => r.msg === 'config reloaded', from);
  assert.deepEqual(reloaded.kept, ['kid']);
  assert.equal(await cli.stop(), 0);
});
