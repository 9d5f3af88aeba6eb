// Acceptance 4: a fast-check fuzz of the HTTP front door. Methods, paths, headers (Content-Type,
// Content-Encoding, Accept, the era headers, Origin, Host) and bodies of every era (2026-07-28
// stateless, 2025 sessions and batches, HTTP+SSE messages, random JSON and bytes, compressed or
// falsely labelled) against a real gateway on 127.0.0.1:0: no answer is a 5xx, every refusal is a
// JSON-RPC error, nothing hangs, and nothing is logged as an internal error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { request } from 'undici';
import { gateway } from '../helpers/gateway.js';
import { H2025, initSession, modernBody, modernHeaders, modernMeta, openSse } from '../helpers/http.js';

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/subscribe',
  'prompts/get',
  'server/discover',
  'subscriptions/listen',
  'logging/setLevel',
  'completion/complete',
  'nope/nope',
];
const TOOLS = ['echo', 'add', 'lookup', 'touch', 'ask', 'nope'];
const REVISIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', 'x'];

/** Header values: well-formed, malformed and random. */
const oneOf = (...values: string[]) => fc.oneof(fc.constantFrom(...values), fc.string({ maxLength: 40 }));
const contentType = oneOf(
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=latin1',
  'text/plain',
  ';',
  'a b',
  '/',
  ',application/json',
  '',
  'application/json;;',
  'Application/JSON',
);
const accept = oneOf(
  'application/json, text/event-stream',
  'text/event-stream',
  'application/json',
  '*/*',
  'text/*',
  'text/event-stream;q=0',
  '',
  'application/json;q=2',
);
const coding = fc.constantFrom(undefined, 'gzip', 'x-gzip', 'deflate', 'br', 'identity', 'gzip, br', 'zstd', 'gzip, gzip, gzip, gzip, gzip', ' , ');
const origin = fc.constantFrom(undefined, 'http://localhost:3000', 'http://evil.example', 'null', 'not a url', 'http://user@localhost');

/** A JSON-RPC message as some era's client would send it, or something near it. */
const message = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.constantFrom('2.0', '1.0'),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.double()),
      method: fc.constantFrom(...METHODS),
      params: fc.oneof(
        fc.record({ name: fc.constantFrom(...TOOLS), arguments: fc.jsonValue({ maxDepth: 2 }), _meta: fc.constant(modernMeta()) }, { requiredKeys: [] }),
        fc.record(
          {
            protocolVersion: fc.constantFrom(...REVISIONS),
            capabilities: fc.constant({ elicitation: {} }),
            clientInfo: fc.constant({ name: 'fuzz', version: '1' }),
          },
          { requiredKeys: [] },
        ),
        fc.record(
          {
            uri: fc.constantFrom('demo://readme', 'demo://items/alpha', 'nope://x'),
            level: fc.constantFrom('info', 'nope'),
            notifications: fc.jsonValue({ maxDepth: 2 }),
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue({ maxDepth: 3 }),
      ),
    },
    { requiredKeys: ['jsonrpc'] },
  ),
  fc.record({ jsonrpc: fc.constant('2.0'), method: fc.constantFrom('notifications/initialized', 'notifications/cancelled', 'notifications/nope') }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.string({ maxLength: 6 }), result: fc.jsonValue({ maxDepth: 2 }) }),
);

const body = fc.oneof(
  message.map((m) => JSON.stringify(m)),
  fc.array(message, { maxLength: 4 }).map((a) => JSON.stringify(a)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  message.map((m) => JSON.stringify(m).slice(0, -3)),
  fc.constantFrom(
    '',
    '[]',
    '{}',
    'null',
    '{"jsonrpc":"2.0","id":1.0000000000000001,"method":"ping"}',
    '{"jsonrpc":"2.0","id":-1e-400,"method":"ping"}',
    `${'['.repeat(200)}${']'.repeat(200)}`,
  ),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')),
);

function encode(text: string, codingName: string | undefined, honest: boolean): Buffer {
  const raw = Buffer.from(text, 'utf8');
  if (!honest || codingName === undefined) return raw;
  switch (codingName) {
    case 'gzip':
    case 'x-gzip':
      return zlib.gzipSync(raw);
    case 'deflate':
      return zlib.deflateSync(raw);
    case 'br':
      return zlib.brotliCompressSync(raw);
    case 'gzip, br':
      return zlib.brotliCompressSync(zlib.gzipSync(raw));
    default:
      return raw;
  }
}

test('fuzz: no 5xx, every refusal a JSON-RPC error, no hang, no internal error', async (t) => {
  const records: Array<Record<string, unknown>> = [];
  const gw = await gateway(t, { dialects: ['2026-07-28', '2025-03-26', '2024-11-05'] }, records);
  const { port } = gw.http.address();
  const origin0 = `http://127.0.0.1:${port}`;

  // Live sessions for requests to name: a 2025 session and an HTTP+SSE one (its stream is read throughout).
  const sessionId = (await initSession(gw.url, '2025-03-26'))['mcp-session-id'];
  const legacy = await openSse(`${origin0}/sse`, 'GET', { accept: 'text/event-stream' });
  t.after(() => legacy.close());
  const legacyId = new URL((await legacy.next()).data, `${origin0}/sse`).searchParams.get('sessionId')!;

  // A well-formed request of some era, then up to three mutations of it, so that the fuzz reaches
  // the dialects as well as the front door's refusals.
  const modernTool = fc.record({ name: fc.constantFrom(...TOOLS), arguments: fc.jsonValue({ maxDepth: 2 }) });
  const base = fc.oneof(
    fc.tuple(fc.constantFrom(...METHODS), modernTool, fc.integer()).map(([m, params, id]) => ({
      method: 'POST',
      target: '/mcp',
      headers: { ...modernHeaders(m, m === 'tools/call' ? params.name : undefined) },
      text: JSON.stringify(modernBody(id, m, m === 'tools/call' ? params : {})),
    })),
    fc.tuple(message, fc.constantFrom('2025-03-26', '2025-06-18', undefined)).map(([m, v]) => ({
      method: 'POST',
      target: '/mcp',
      headers: { ...H2025, 'mcp-session-id': sessionId, ...(v ? { 'mcp-protocol-version': v } : {}) },
      text: JSON.stringify(m),
    })),
    fc.array(message, { maxLength: 4 }).map((batch) => ({
      method: 'POST',
      target: '/mcp',
      headers: { ...H2025, 'mcp-session-id': sessionId },
      text: JSON.stringify(batch),
    })),
    message.map((m) => ({
      method: 'POST',
      target: `/messages?sessionId=${legacyId}`,
      headers: { 'content-type': 'application/json' },
      text: JSON.stringify(m),
    })),
    fc.constantFrom(
      { method: 'GET', target: '/mcp', headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId }, text: '' },
      { method: 'GET', target: '/mcp', headers: { accept: 'text/event-stream' }, text: '' },
      { method: 'GET', target: '/sse', headers: { accept: 'text/event-stream' }, text: '' },
      { method: 'DELETE', target: '/mcp', headers: { 'mcp-session-id': 'nope' }, text: '' },
    ),
    fc.constantFrom(...REVISIONS).map((v) => ({
      method: 'POST',
      target: '/mcp',
      headers: { ...H2025 },
      text: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
      }),
    })),
  );
  const headerName = fc.constantFrom(
    'content-type',
    'accept',
    'mcp-protocol-version',
    'mcp-method',
    'mcp-name',
    'mcp-session-id',
    'last-event-id',
    'mcp-param-region',
    'host',
    'origin',
  );
  const headerValue = (name: string) =>
    ({
      'content-type': contentType,
      accept,
      'mcp-protocol-version': oneOf(...REVISIONS),
      'mcp-method': oneOf(...METHODS),
      'mcp-name': oneOf(...TOOLS, '=?base64?ZWNobw==?=', '=?base64?ZWNobx==?=', '=?base64?*?=', ' echo '),
      'mcp-session-id': oneOf(sessionId, legacyId, 'nope'),
      'last-event-id': oneOf('p1.1', 'g1.0', 'x'),
      'mcp-param-region': oneOf('eu', '=?base64?ZXU=?='),
      // (undici itself refuses some malformed values, `[::1` among them: test/integration/hardening-host sends those raw.)
      host: fc.constantFrom(`127.0.0.1:${port}`, `localhost:${port}`, `evil.example:${port}`, 'a@b', '[::1]x', `[::1]:${port}`),
      origin,
    })[name] as fc.Arbitrary<string | undefined>;
  type Req = { method: string; target: string; headers: Record<string, string>; text: string; coding?: string; honest?: boolean };
  const mutation: fc.Arbitrary<(r: Req) => Req> = fc.oneof(
    headerName.chain((k) => headerValue(k).map((v) => (r: Req) => ({ ...r, headers: v === undefined ? r.headers : { ...r.headers, [k]: v } }))),
    headerName.map((k) => (r: Req) => {
      const headers = { ...r.headers };
      delete headers[k];
      return { ...r, headers };
    }),
    fc.tuple(coding, fc.boolean()).map(([c, honest]) => (r: Req) => ({ ...r, coding: c, honest })),
    fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD').map((m) => (r: Req) => ({ ...r, method: m })),
    fc
      .constantFrom('/mcp', '/sse', '/messages', '/messages?sessionId=nope', '/mcp?x=1', '/mcp/', '/nope', '/mcp%00', '/SSE')
      .map((p) => (r: Req) => ({ ...r, target: p })),
    body.map((text) => (r: Req) => ({ ...r, text })),
  );

  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(base, fc.array(mutation, { maxLength: 3 }), async (start, mutations) => {
      const r: Req = mutations.reduce((acc, m) => m(acc), start as Req);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers)) if (!/[\r\n\0]/.test(v)) h[k] = v;
      if (r.coding !== undefined) h['content-encoding'] = r.coding;
      const { method, target, text } = r;
      const withBody = method !== 'GET' && method !== 'HEAD';
      const bad: string[] = [];
      const ac = new AbortController();
      let hung = false;
      const timer = setTimeout(() => {
        hung = true;
        ac.abort();
      }, 10_000);
      try {
        const res = await request(`${origin0}${target}`, {
          method: method as 'GET',
          headers: h,
          body: withBody ? encode(text, r.coding, r.honest ?? false) : undefined,
          signal: ac.signal,
        });
        // A stream stays open: its head is the answer; leave it.
        const stream = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
        let payload = '';
        if (stream) {
          ac.abort();
          await res.body.text().catch(() => '');
        } else payload = await res.body.text();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const where = `${method} ${target} ${JSON.stringify(h)} ${JSON.stringify(text).slice(0, 200)}`;
        if (res.statusCode >= 500) bad.push(`${res.statusCode} ${where} → ${payload.slice(0, 200)}`);
        else if (res.statusCode >= 400 && method !== 'HEAD') {
          let ok = false;
          try {
            const j = JSON.parse(payload) as { jsonrpc?: string; error?: { code?: unknown; message?: unknown } };
            ok = j.jsonrpc === '2.0' && typeof j.error?.code === 'number' && typeof j.error?.message === 'string';
          } catch {
            ok = false;
          }
          if (!ok) bad.push(`${res.statusCode} not a JSON-RPC error: ${where} → ${payload.slice(0, 200)}`);
        }
      } catch (e) {
        bad.push(`${hung ? 'no answer within 10 s' : (e as Error).message}: ${method} ${target} ${JSON.stringify(h)}`);
      } finally {
        clearTimeout(timer);
      }
      // Thrown, so that fast-check reports this run's own finding with the shrunk input.
      if (bad.length > 0) throw new Error(bad.join('\n'));
    }),
    { numRuns: 800, interruptAfterTimeLimit: 60_000 },
  );
  // Not vacuous: requests were served as well as refused, for many reasons.
  if (process.env.SWITCHYARD_FUZZ_STATS) process.stderr.write(`${JSON.stringify([...statuses].sort())}\n`);
  assert.ok((statuses.get(200) ?? 0) > 0 && [...statuses.keys()].filter((s) => s >= 400).length >= 6, JSON.stringify([...statuses]));
  assert.deepEqual(
    records.filter((r) => r.msg === 'internal error' || (r.level as number) >= 60),
    [],
  );
});
