// Found by h-trial7 (2026-12): `trace export failed` logged the exporter's error as it was, and
// the OTLP exporter keeps the collector's whole response body in that error's `data` (up to 4 MiB).
// A collector or a proxy in front of it that echoes the request (Express's `Cannot POST <path>`,
// an auth proxy repeating the headers it refused) thereby wrote the endpoint's path and query,
// which `tracing on` withholds because collectors take their key there, and the export headers,
// which docs/operations.md says are never logged, into every failure line. The line now names the
// error's type, status text and code and the body's length only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCli } from '../helpers/cli.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { until } from '../helpers/replicas.js';

const PATH_KEY = 'pathkey-5d1e0b9a';
const QUERY_KEY = 'querykey-8c2f4a71';
const HEADER_KEY = 'headerkey-3b6e9d20';

test('a failed trace export logs the status, never the collector body that echoes path, query and headers', async (t) => {
  let bodyChars = 0;
  const collector = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = `Cannot POST ${req.url} (authorization: ${req.headers.authorization})`;
      bodyChars = body.length;
      res.writeHead(404, { 'content-type': 'text/plain' }).end(body);
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => collector.close(() => resolve())));
  const { port } = collector.address() as AddressInfo;

  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('OTEL_') || k.startsWith('SWITCHYARD_')) delete env[k];
  env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = `http://127.0.0.1:${port}/v1/keys/${PATH_KEY}/traces?key=${QUERY_KEY}`;
  env.OTEL_EXPORTER_OTLP_TRACES_HEADERS = `authorization=Bearer%20${HEADER_KEY}`;
  env.OTEL_BSP_SCHEDULE_DELAY = '50';
  const cli = await startCli(t, ['--no-admin'], env);

  const answer = await post(cli.url, modernBody(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
  assert.equal(answer.status, 200);
  await until(() => cli.records().some((r) => r.msg === 'trace export failed'), 'a trace export failure line');

  const failed = cli.records().find((r) => r.msg === 'trace export failed');
  assert.deepEqual({ err: failed?.err, code: failed?.code, bodyChars: failed?.bodyChars }, { err: 'OTLPExporterError: Not Found', code: 404, bodyChars });
  assert.ok((failed?.spans as number) >= 1);
  assert.equal(await cli.stop(), 0);
  for (const secret of [PATH_KEY, QUERY_KEY, HEADER_KEY]) assert.ok(!cli.stderr().includes(secret), `${secret} in the log:\n${cli.stderr()}`);
});
