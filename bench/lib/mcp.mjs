// MCP request shapes for the bench, 2025-era session set-up and probes (undici).

import { Pool, request } from 'undici';
import { createParser } from 'eventsource-parser';

export const MODERN = '2026-07-28';
export const SESSION_VERSION = '2025-11-25';
/** ~100 bytes of text to echo. */
export const ECHO_TEXT = 'switchyard-bench-'.padEnd(100, 'x');

const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'switchyard-bench', version: '1.0.0' },
};

/** The JSON-RPC params of a request kind. */
export function paramsOf(kind) {
  return kind === 'tools/call' ? { name: 'echo', arguments: { message: ECHO_TEXT } } : {};
}

/** A 2026-07-28 stateless request: headers and body. */
export function modernRequest(kind, id = '[<id>]') {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': kind,
  };
  if (kind === 'tools/call') headers['mcp-name'] = 'echo';
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: kind, params: { ...paramsOf(kind), _meta: META } });
  return { headers, body };
}

/** A request inside a 2025-era session. */
export function sessionRequest(kind, session, id = '[<id>]') {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': session.id,
      'mcp-protocol-version': session.version,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: kind, params: paramsOf(kind) }),
  };
}

/** Reads a JSON or SSE response body and returns the JSON-RPC messages in it. */
export function messagesOf(contentType, text) {
  if ((contentType ?? '').includes('text/event-stream')) {
    const out = [];
    const p = createParser({
      onEvent: (e) => {
        try {
          out.push(JSON.parse(e.data));
        } catch {
          /* not JSON */
        }
      },
    });
    p.feed(text);
    return out;
  }
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v : [v];
  } catch {
    return [];
  }
}

/** Checks that a reply answers `kind` correctly; throws otherwise. */
export function checkAnswer(kind, status, contentType, text, what) {
  if (status !== 200) throw new Error(`${what}: HTTP ${status}: ${text.slice(0, 300)}`);
  const msg = messagesOf(contentType, text).find((m) => m && ('result' in m || 'error' in m));
  if (!msg || msg.error) throw new Error(`${what}: no result: ${text.slice(0, 300)}`);
  if (kind === 'tools/call' && !JSON.stringify(msg.result).includes(ECHO_TEXT)) throw new Error(`${what}: echo missing: ${text.slice(0, 300)}`);
  if (kind === 'tools/list' && !Array.isArray(msg.result.tools)) throw new Error(`${what}: no tools: ${text.slice(0, 300)}`);
  return msg;
}

/** What an answer to `kind` contains. */
export function expectOf(kind) {
  return kind === 'tools/call' ? ECHO_TEXT : kind === 'tools/list' ? '"tools"' : undefined;
}

/** Sends one request and checks the answer. */
export async function probe(url, kind, req, what, dispatcher) {
  const body = req.body.replace('"[<id>]"', '7');
  const res = await request(url, { method: 'POST', headers: req.headers, body, dispatcher, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await res.body.text();
  return checkAnswer(kind, res.statusCode, res.headers['content-type'], text, what);
}

/** Opens a 2025-era session (initialize + notifications/initialized); `extra` headers (an `authorization`) go on both. */
export async function openSession(url, dispatcher, extra = {}) {
  const res = await request(url, {
    method: 'POST',
    dispatcher,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: SESSION_VERSION, capabilities: {}, clientInfo: { name: 'switchyard-bench', version: '1.0.0' } },
    }),
  });
  const text = await res.body.text();
  const id = res.headers['mcp-session-id'];
  if (res.statusCode !== 200 || typeof id !== 'string') throw new Error(`initialize: HTTP ${res.statusCode}, session ${id}: ${text.slice(0, 300)}`);
  const msg = messagesOf(res.headers['content-type'], text).find((m) => m.id === 0);
  const version = msg?.result?.protocolVersion ?? SESSION_VERSION;
  const n = await request(url, {
    method: 'POST',
    dispatcher,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': id,
      'mcp-protocol-version': version,
      ...extra,
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await n.body.text();
  if (n.statusCode >= 300) throw new Error(`notifications/initialized: HTTP ${n.statusCode}`);
  return { id, version };
}

/**
 * A 2024-11-05 HTTP+SSE client session: GET the stream, wait for `endpoint`, initialize.
 * `call(kind)` POSTs and resolves when the matching `message` event arrives. `headers` (an
 * `authorization`) go on the GET and on every POST.
 */
export async function openLegacy(sseUrl, { postPool, streamDispatcher, timeoutMs = 15_000, handshake = true, headers: extra = {} } = {}) {
  const ac = new AbortController();
  const res = await request(sseUrl, {
    method: 'GET',
    headers: { accept: 'text/event-stream', ...extra },
    signal: ac.signal,
    dispatcher: streamDispatcher,
    headersTimeout: timeoutMs,
    bodyTimeout: 0,
  });
  if (res.statusCode !== 200) {
    const t = await res.body.text().catch(() => '');
    throw new Error(`GET ${sseUrl}: HTTP ${res.statusCode} ${t.slice(0, 200)}`);
  }
  const pending = new Map();
  let endpointResolve;
  const endpoint = new Promise((r) => (endpointResolve = r));
  const parser = createParser({
    onEvent: (e) => {
      if (e.event === 'endpoint') return endpointResolve(new URL(e.data, sseUrl).href);
      if (e.event !== undefined && e.event !== 'message') return;
      let m;
      try {
        m = JSON.parse(e.data);
      } catch {
        return;
      }
      if (m && m.id !== undefined && pending.has(m.id)) {
        const cb = pending.get(m.id);
        pending.delete(m.id);
        cb(m);
      }
    },
  });
  let closed = false;
  const pump = (async () => {
    try {
      for await (const chunk of res.body) parser.feed(chunk.toString());
    } catch {
      // aborted
    }
    closed = true;
    for (const cb of pending.values()) cb(undefined);
    pending.clear();
  })();
  const timer = setTimeout(() => endpointResolve(undefined), timeoutMs);
  const postUrl = await endpoint;
  clearTimeout(timer);
  if (!postUrl) {
    ac.abort();
    throw new Error(`no endpoint event from ${sseUrl}`);
  }
  const u = new URL(postUrl);
  const path = u.pathname + u.search;
  let nextId = 1;
  const post = async (payload) => {
    const r = await (postPool ?? { request: ({ path: p, ...o }) => request(u.origin + p, o) }).request({
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...extra },
      body: JSON.stringify(payload),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await r.body.dump();
    if (r.statusCode >= 300) throw new Error(`POST ${path}: HTTP ${r.statusCode}`);
  };
  const rpc = (method, params) => {
    const id = nextId++;
    const answer = new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`no message event for ${method} #${id}`));
      }, timeoutMs);
      pending.set(id, (m) => {
        clearTimeout(t);
        if (!m) reject(new Error('stream closed'));
        else resolve(m);
      });
    });
    const sent = post({ jsonrpc: '2.0', id, method, params });
    return Promise.all([answer, sent]).then(([m]) => m);
  };
  const session = {
    postUrl,
    rpc,
    get closed() {
      return closed;
    },
    close() {
      ac.abort();
      return pump;
    },
  };
  if (handshake) {
    const init = await rpc('initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'switchyard-bench', version: '1.0.0' } });
    if (!init.result) throw new Error(`legacy initialize failed: ${JSON.stringify(init).slice(0, 300)}`);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }
  return session;
}

export { Pool };
