// Regression (found by a trial of three replicas behind nginx with tracing on): an HTTP+SSE
// (2024-11-05) POST that landed on a replica not holding its session's stream was carried out by
// the stream's replica (bus message `sse.post`) without its W3C trace context: that replica's
// SERVER span started a new trace, with no parent, although the POST carried a `traceparent`. Behind
// a round-robin balancer that is most of a legacy client's requests. The forward now carries the
// POST's `traceparent` and `tracestate` (checked again on arrival), and the span continues the
// client's trace as it does when the POST reaches the stream's replica itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { receiver } from '../helpers/otlp.js';
import { startRedis } from '../helpers/redis.js';
import { spawnReplica, until } from '../helpers/replicas.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';

test('an HTTP+SSE POST forwarded to the replica holding the stream keeps its trace context', { timeout: 60_000 }, async (t) => {
  const redis = await startRedis(t);
  const otlp = await receiver(t);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-sse-trace-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, 'switchyard.json');
  const config = { listen: { host: '127.0.0.1', port: 0 }, dialects: { legacySse: true }, cluster: {}, upstreams: { demo: { transport: 'embedded' } } };
  writeFileSync(configFile, JSON.stringify(config));
  // Only the stream's replica traces: every span in the export is its own.
  const holder = await spawnReplica(t, {
    id: 'r1',
    configFile,
    redis: redis.url,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
  const other = await spawnReplica(t, { id: 'r2', configFile, redis: redis.url });

  // The stream on r1.
  const get = http.get(`${holder.origin}/demo/sse`, { headers: { accept: 'text/event-stream' } });
  t.after(() => get.destroy());
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => get.on('response', resolve).on('error', reject));
  assert.equal(res.statusCode, 200);
  let events = '';
  res.setEncoding('utf8');
  res.on('data', (d: string) => (events += d));
  res.on('error', () => {});
  await until(() => /event: endpoint\ndata: \S+/.test(events), 'the endpoint event');
  const endpoint = /event: endpoint\ndata: (\S+)/.exec(events)![1];

  // Every POST goes to r2, which forwards it to r1.
  const postTo = async (body: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(new URL(endpoint, `${other.origin}/demo/sse`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    assert.equal(r.status, 202, await r.text());
  };
  await postTo({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  await until(() => events.includes('"id":1,'), 'the initialize answer');
  await postTo({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await postTo(
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } },
    { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: 'vendor=x' },
  );
  await until(() => events.includes('"id":2,'), 'the tools/call answer');

  // The SERVER span (kind 2) and its upstream call's CLIENT span (kind 3) share the name.
  const spans = await otlp.named('tools/call echo', 2);
  const server = spans.filter((s) => s.kind === 2);
  assert.equal(server.length, 1);
  assert.deepEqual([server[0].traceId, server[0].parentSpanId], [TRACE_ID, PARENT_ID]);
  const client = spans.filter((s) => s.kind === 3);
  assert.deepEqual(
    client.map((s) => [s.traceId, s.parentSpanId]),
    [[TRACE_ID, server[0].spanId]],
  );
});
