// Regression (h-break): with `auth` on some mount, the standalone listener authenticates a
// POST's head in its one catch-all route's own hook (`onRequest`), before the body is read, and the
// handler then used that admitted head's identity for whatever mount the path named when the
// body had arrived. A reload in between that put `auth` on the mount (a new mount object) had
// the request served, unauthenticated, by the new mount that asks for a token. An admitted
// head now counts only for the mount it was checked against; for another the head is checked
// again (here: 401).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { validateConfig } from '../../src/config/load.js';
import { modernBody } from '../helpers/http.js';
import { gatewayFromConfig } from '../helpers/identity.js';
import { until } from '../helpers/replicas.js';

const KEY = 'head-key_0123456789abcdefghijklmnopqrstu';
const API_KEYS = [{ name: 'ci-bot', sha256: createHash('sha256').update(KEY).digest('hex'), scopes: ['mcp'] }];

test('a POST whose head came before a reload put auth on its mount and whose body came after is refused 401, not served anonymously', async (t) => {
  const raw = { upstreams: { a: { transport: 'embedded', auth: { apiKeys: API_KEYS } }, b: { transport: 'embedded' } } };
  const gw = await gatewayFromConfig(t, raw);
  const b = new URL(gw.urls.find((u) => u.endsWith('/b/mcp'))!);
  const body = JSON.stringify(modernBody(1, 'tools/list'));
  const s = net.connect({ host: '127.0.0.1', port: Number(b.port) });
  t.after(() => s.destroy());
  const chunks: Buffer[] = [];
  s.on('data', (d: Buffer) => chunks.push(d));
  await new Promise<void>((r) => s.once('connect', () => r()));
  s.write(
    `POST ${b.pathname} HTTP/1.1\r\nHost: ${b.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n` +
      body.slice(0, 10),
  );
  // The head is admitted (no auth on b yet) while the body is still coming.
  await new Promise((r) => setTimeout(r, 200));
  const report = await gw.reload(
    validateConfig(
      { ...raw, listen: { host: '127.0.0.1', port: 0 }, upstreams: { ...raw.upstreams, b: { transport: 'embedded', auth: { apiKeys: API_KEYS } } } },
      'test',
      { env: {} },
    ),
  );
  assert.deepEqual(report.changed, ['b']);
  s.end(body.slice(10));
  await until(() => Buffer.concat(chunks).includes('\r\n\r\n'), 'an answer', 5_000);
  const status = Number(Buffer.concat(chunks).toString('latin1').split(' ')[1]);
  assert.equal(status, 401, Buffer.concat(chunks).toString('utf8').slice(0, 400));
});
