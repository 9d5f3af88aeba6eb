// The status page in real headless Chromium (playwright-core): one row per upstream, markup from
// upstreams shown as literal text with no script or dialog, the CSP header, and a screenshot.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { channels } from '../../src/core/diagnostics.js';
import type { RequestContext } from '../../src/core/request.js';
import { createMetrics } from '../../src/telemetry/metrics.js';
import { ADMIN_CSP, startAdminServer } from '../../src/admin/server.js';
import { createStatusRecorder, type StatusSource, type UpstreamStatus } from '../../src/admin/status.js';
import { chromiumPage, noChromium } from '../helpers/chromium.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SCREENSHOT = path.join(REPO_ROOT, 'test-artifacts', 'status-page.png');
const IMG = '<img src=x onerror=alert(1)>';
const SCRIPT = '"><script>window.__pwned = 1</script>';

function ctxOf(method: string): RequestContext {
  return {
    method,
    params: { name: 'read_file' },
    protocolVersion: '2025-06-18',
    clientInfo: undefined,
    clientCapabilities: {},
    logLevel: undefined,
    identity: null,
    mount: 'main',
    dialect: '2025-03-26',
    signal: new AbortController().signal,
    progressToken: undefined,
    onProgress() {},
    onLog() {},
    ask: undefined,
  };
}

const UPSTREAMS: UpstreamStatus[] = [
  { name: 'fs', era: '2025-06-18', transport: 'stdio', state: 'up', inFlight: 2, serverInfo: { name: 'fs-server', version: '1.2.0' } },
  { name: 'evil', era: '2024-11-05', transport: 'http', state: 'down', inFlight: 0, serverInfo: { name: IMG, version: '1.0' }, lastError: IMG },
  { name: SCRIPT, era: '2026-07-28', transport: 'http', state: 'starting', inFlight: 0 },
];

test('the status page renders the document as text under its CSP, with no script from the data', { skip: noChromium }, async (t) => {
  const source: StatusSource = {
    upstreams: () => UPSTREAMS,
    mounts: () => [
      {
        name: 'main',
        url: 'http://127.0.0.1:7600/mcp',
        dialects: [
          { id: '2026-07-28', sessions: 0, streams: 4 },
          { id: '2025-03-26', sessions: 3, streams: 1 },
        ],
      },
    ],
    ready: () => ({ ready: false, reasons: ['upstream evil is down'] }),
    draining: () => false,
  };
  const metrics = createMetrics({ mounts: ['main'], defaultMetrics: false });
  const recorder = createStatusRecorder();
  const admin = await startAdminServer({ port: 0, source, metrics, recorder });
  t.after(async () => {
    await admin.close();
    recorder.close();
    metrics.close();
  });
  for (let i = 0; i < 30; i++) {
    channels.upstreamCallEnd.publish({ ctx: ctxOf('tools/call'), upstream: 'fs', startedAt: 0, durationMs: 5 + i });
    channels.requestEnd.publish({ ctx: ctxOf('tools/call'), startedAt: 0, durationMs: 6 + i, rpcCode: i % 10 === 0 ? -32603 : undefined });
  }
  channels.requestEnd.publish({ ctx: ctxOf(`${IMG}/method`), startedAt: 0, durationMs: 1 });
  channels.refusal.publish({ code: 'SWY_ERR_HTTP_ORIGIN_FORBIDDEN', status: 403, mount: 'main', dialect: IMG });

  const { page, dialogs } = await chromiumPage(t);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));

  const response = await page.goto(admin.address().url);
  assert.ok(response);
  assert.equal(response.status(), 200);
  assert.equal(response.headers()['content-security-policy'], ADMIN_CSP);
  assert.equal(response.headers()['x-content-type-options'], 'nosniff');
  await page.waitForSelector('body[data-rendered]');

  const cells = async (table: string) => {
    const trs = page.locator(`#${table} tbody tr`);
    const out: string[][] = [];
    for (let i = 0; i < (await trs.count()); i++) out.push(await trs.nth(i).locator('td').allTextContents());
    return out;
  };
  const rows = await cells('upstreams');
  assert.equal(rows.length, UPSTREAMS.length, 'one row per upstream');
  assert.deepEqual(rows[1], ['evil', `${IMG} 1.0`, '2024-11-05', 'http', 'down', '0', '0', '\u2013', '\u2013', IMG]);
  assert.deepEqual(rows[2].slice(0, 5), [SCRIPT, '', '2026-07-28', 'http', 'starting']);
  assert.deepEqual(rows[0].slice(0, 7), ['fs', 'fs-server 1.2.0', '2025-06-18', 'stdio', 'up', '2', '30']);
  assert.match(rows[0][7], /^\d+ ms$/);
  assert.match(rows[0][8], /^\d+ ms$/);

  assert.equal(await page.locator('img').count(), 0);
  assert.deepEqual(await page.locator('script').evaluateAll((ss) => ss.map((s) => s.getAttribute('src'))), ['/status.js']);
  assert.equal(await page.evaluate('typeof window.__pwned'), 'undefined');
  assert.equal(await page.locator('#ready').textContent(), 'not ready');
  assert.equal(await page.locator('#reasons').textContent(), 'upstream evil is down');
  assert.deepEqual(await cells('mounts'), [
    ['main', 'http://127.0.0.1:7600/mcp', '2026-07-28', '0', '4'],
    ['main', 'http://127.0.0.1:7600/mcp', '2025-03-26', '3', '1'],
  ]);
  assert.deepEqual(
    (await cells('methods')).map((r) => r.slice(0, 3)),
    [
      ['tools/call', '30', '3'],
      ['_other', '1', '0'],
    ],
  );
  assert.equal(await page.locator('#methods svg.spark polyline').count(), 4, 'a requests and an errors line per method');
  assert.deepEqual(
    (await cells('refusals')).map((r) => r.slice(1)),
    [['SWY_ERR_HTTP_ORIGIN_FORBIDDEN', '403', 'main', IMG]],
  );

  mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  assert.ok(statSync(SCREENSHOT).size > 0);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(problems, []);
});
