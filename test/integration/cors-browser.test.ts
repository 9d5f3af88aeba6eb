// CORS end to end in real headless Chromium (playwright-core): a page served from another origin
// (127.0.0.1 on another port) calls the gateway with fetch, as a browser MCP client (MCP
// Inspector's web UI, a team's web app) does: a 2026-07-28 tools/call, a 2025 initialize whose
// Mcp-Session-Id it reads back, and a 401 whose WWW-Authenticate it reads. Without `cors` the
// browser refuses every one of them to the page.
// See WHATWG Fetch §3.2 (the CORS protocol), §4.8 (CORS-preflight fetch).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chromiumPage, noChromium, pageServer } from '../helpers/chromium.js';
import { gatewayFromConfig } from '../helpers/identity.js';

const KEY = 'cors-page-key_0123456789abcdefghijklmnopq';
const API_KEYS = [{ name: 'page', sha256: createHash('sha256').update(KEY).digest('hex') }];

/** What the page's three fetches saw: each the values it could read, or the error fetch rejected with. */
type PageResults = Record<'call' | 'init' | 'denied', unknown>;

/** Runs the three calls from the page (in its origin) against the MCP endpoint `url`. */
async function callsFromPage(page: import('playwright-core').Page, url: string): Promise<PageResults> {
  return page.evaluate(
    async ({ url, key }) => {
      const attempt = async (f: () => Promise<unknown>) => {
        try {
          return await f();
        } catch (err) {
          return `rejected: ${String(err)}`;
        }
      };
      const modern = (authorization?: string): Record<string, string> => ({
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'echo',
        ...(authorization ? { authorization } : {}),
      });
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'page', version: '1.0.0' },
      };
      const callBody = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { message: 'from a page' }, _meta: meta },
      });
      return {
        call: await attempt(async () => {
          const r = await fetch(url, { method: 'POST', headers: modern(`Bearer ${key}`), body: callBody });
          return { status: r.status, body: await r.json() };
        }),
        init: await attempt(async () => {
          const r = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1.0.0' } },
            }),
          });
          const body = (await r.json()) as { result?: { protocolVersion?: string } };
          return { status: r.status, session: r.headers.get('mcp-session-id'), protocolVersion: body.result?.protocolVersion };
        }),
        denied: await attempt(async () => {
          const r = await fetch(url, { method: 'POST', headers: modern(), body: callBody });
          return { status: r.status, challenge: r.headers.get('www-authenticate') };
        }),
      };
    },
    { url, key: KEY },
  );
}

test('a page on another origin calls the gateway with fetch once `cors` lists it, and is refused by the browser without', { skip: noChromium }, async (t) => {
  const pageOrigin = await pageServer(t);
  const raw = { auth: { apiKeys: API_KEYS }, upstreams: { a: { transport: 'embedded' } } };
  const open = await gatewayFromConfig(t, { ...raw, cors: { origins: [pageOrigin] } });
  const closed = await gatewayFromConfig(t, raw);
  const { page } = await chromiumPage(t);
  await page.goto(`${pageOrigin}/`);
  assert.equal(new URL(page.url()).origin, pageOrigin);
  assert.notEqual(new URL(open.urls[0]).origin, pageOrigin);

  const got = await callsFromPage(page, open.urls[0]);
  assert.deepEqual(got.call, {
    status: 200,
    body: {
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [{ type: 'text', text: 'Echo: from a page' }],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'switchyard-demo', version: '0.1.0' } },
      },
    },
  });
  const init = got.init as { status: number; session: unknown; protocolVersion: unknown };
  assert.equal(init.status, 200);
  assert.match(String(init.session), /^[0-9a-f-]{36}$/);
  assert.equal(init.protocolVersion, '2025-06-18');
  const metadata = `${new URL(open.urls[0]).origin}/.well-known/oauth-protected-resource/a/mcp`;
  assert.deepEqual(got.denied, { status: 401, challenge: `Bearer resource_metadata="${metadata}"` });

  // The same page, the same calls, a gateway without `cors`: the browser hands the page nothing.
  const refused = await callsFromPage(page, closed.urls[0]);
  assert.deepEqual(refused, {
    call: 'rejected: TypeError: Failed to fetch',
    init: 'rejected: TypeError: Failed to fetch',
    denied: 'rejected: TypeError: Failed to fetch',
  });
});
