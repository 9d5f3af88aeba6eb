// Finds which MCP era an HTTP server speaks, by the spec's client fallback rule.

import { request } from 'undici';
import { SwitchyardError } from '../core/errors.js';
import { DEFAULT_LIMITS } from '../core/limits.js';
import type { JsonObject } from '../core/message.js';
import { MODERN_REVISION, STREAMABLE_REVISIONS } from '../core/versions.js';
import { headerOf, postMessage, readText, sseMessages, type PostAnswer } from './http-client.js';

/** One step of a probe: what was sent and what came back. */
export interface ProbeStep {
  /** e.g. `POST /mcp server/discover`. */
  request: string;
  /** HTTP status, when a response came. */
  status?: number;
  /** The first 300 characters of the body (or the first SSE event). */
  excerpt?: string;
  /** Network error or timeout. */
  error?: string;
  /** What the step concluded. */
  note: string;
}

/** The probe's finding. */
export interface ProbeVerdict {
  /** True when an era was found. */
  ok: boolean;
  /** The revision: 2026-07-28, the negotiated 2025 revision, or 2024-11-05. */
  era?: string;
  /** `stateless-http` (2026-07-28), `streamable-http` (2025 era) or `http+sse` (2024-11-05). */
  transport?: 'stateless-http' | 'streamable-http' | 'http+sse';
  /** The URL that answered (after same-origin redirects). */
  url: string;
  /** For HTTP+SSE: the POST endpoint named by the `endpoint` event, absolute. */
  endpoint?: string;
  serverInfo?: JsonObject;
  capabilities?: JsonObject;
  /** Why no era was found (ok false). */
  reason?: string;
  steps: ProbeStep[];
}

/** Probe settings. */
export interface ProbeOptions {
  /** Extra request headers (e.g. Authorization). */
  headers?: Record<string, string>;
  /** Time for each step's response, ms (default 10,000). */
  timeoutMs?: number;
  /** Tries for a step that gets a 5xx, a timeout or a reset (default 3), with backoff. */
  tries?: number;
  /** First backoff delay, ms (default 200; doubles). */
  backoffMs?: number;
  /** Implementation sent in `_meta`/`clientInfo`. */
  clientInfo?: { name: string; version: string };
}

const excerpt = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').slice(0, 300);

function describe(a: PostAnswer, first?: JsonObject): string {
  if (a.kind === 'json') return excerpt(JSON.stringify(a.json));
  if (a.kind === 'sse') return excerpt(first ? JSON.stringify(first) : '(SSE stream)');
  return excerpt(a.text);
}

class Retryable extends Error {}

/**
 * Probes `url` as the spec's backwards-compatibility sections describe (digest README "Era
 * detection"): first a modern `server/discover` (a result, or a recognisable modern error body,
 * means 2026-07-28); then `initialize` (success: the 2025 era); a 400, 404 or 405 to that means
 * GET the same URL and expect an `endpoint` event first (HTTP+SSE). 401 and 403 are
 * authentication errors, never era evidence; a 5xx, a timeout or a reset is retried with backoff
 * and never causes a fallback; redirects are followed only to the same origin.
 * @see 2026-07-28 basic/versioning#backward-compatibility; 2025-11-25 basic/transports#backwards-compatibility
 * @returns a verdict; never throws for network or protocol trouble (it is in `reason`).
 */
export async function probeUrl(rawUrl: string, opts: ProbeOptions = {}): Promise<ProbeVerdict> {
  const steps: ProbeStep[] = [];
  const headers = opts.headers ?? {};
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const tries = opts.tries ?? 3;
  const clientInfo = opts.clientInfo ?? { name: 'switchyard-probe', version: '1' };
  let url = rawUrl;
  const origin = new URL(rawUrl).origin;
  const path = () => new URL(url).pathname;
  const fail = (reason: string): ProbeVerdict => ({ ok: false, url, reason, steps });

  /** POSTs with retries on 5xx/timeout/reset and same-origin redirects. */
  const postStep = async (label: string, body: JsonObject): Promise<{ answer: PostAnswer; first?: JsonObject } | { error: string }> => {
    let delay = opts.backoffMs ?? 200;
    for (let attempt = 1; ; attempt++) {
      const name = `POST ${path()} ${label}${attempt > 1 ? ` (try ${attempt})` : ''}`;
      try {
        const extra: Record<string, string> = label === 'server/discover' ? { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'server/discover' } : {};
        const answer = await postMessage(url, body, { ...extra, ...headers }, DEFAULT_LIMITS, AbortSignal.timeout(timeoutMs), timeoutMs);
        let first: JsonObject | undefined;
        if (answer.kind === 'sse' && answer.messages) {
          for await (const m of answer.messages) {
            if ('result' in m || 'error' in m) {
              first = m;
              break;
            }
          }
        }
        if (answer.status >= 300 && answer.status < 400) {
          const loc = headerOf(answer.headers, 'location');
          const next = loc ? new URL(loc, url) : undefined;
          if (!next || next.origin !== origin) {
            steps.push({ request: name, status: answer.status, note: `redirect to ${loc ?? '(none)'} refused: only same-origin redirects are followed` });
            return { error: `redirect to another origin (${loc ?? 'no Location'})` };
          }
          steps.push({ request: name, status: answer.status, note: `same-origin redirect to ${next.pathname}` });
          url = next.href;
          continue;
        }
        if (answer.status >= 500) {
          steps.push({ request: name, status: answer.status, excerpt: describe(answer, first), note: 'server error: retried, never a reason to fall back' });
          throw new Retryable(`HTTP ${answer.status}`);
        }
        steps.push({ request: name, status: answer.status, excerpt: describe(answer, first), note: '' });
        return { answer, first };
      } catch (err) {
        if (!(err instanceof Retryable)) steps.push({ request: name, error: (err as Error).message, note: 'no answer: retried, never a reason to fall back' });
        if (attempt >= tries) return { error: (err as Error).message };
        await new Promise((r) => setTimeout(r, delay));
        delay *= 2;
      }
    }
  };

  const note = (s: string) => {
    steps[steps.length - 1].note = s;
  };

  // 1. The modern probe.
  const discover = await postStep('server/discover', {
    jsonrpc: '2.0',
    id: 'switchyard-probe-1',
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': clientInfo,
      },
    },
  });
  if ('error' in discover) return fail(`no usable answer to server/discover: ${discover.error}`);
  {
    const { answer, first } = discover;
    const msg = (answer.kind === 'json' ? answer.json : first) as JsonObject | undefined;
    const result = msg?.result as JsonObject | undefined;
    const error = msg?.error as { code?: number; data?: { supported?: unknown } } | undefined;
    if (answer.status === 401 || answer.status === 403) {
      note('authentication required: not era evidence');
      return fail(`HTTP ${answer.status}: the server wants credentials (pass --header Authorization:…)`);
    }
    if (answer.status < 300 && result && Array.isArray(result.supportedVersions) && result.supportedVersions.includes(MODERN_REVISION)) {
      note('a DiscoverResult listing 2026-07-28: modern');
      const meta = (result._meta ?? {}) as JsonObject;
      return {
        ok: true,
        era: MODERN_REVISION,
        transport: 'stateless-http',
        url,
        serverInfo: meta['io.modelcontextprotocol/serverInfo'] as JsonObject,
        capabilities: result.capabilities as JsonObject,
        steps,
      };
    }
    if (error?.code === -32022 && Array.isArray(error.data?.supported) && error.data.supported.includes(MODERN_REVISION)) {
      note('-32022 naming 2026-07-28 among supported versions: modern');
      return { ok: true, era: MODERN_REVISION, transport: 'stateless-http', url, steps };
    }
    note(answer.status < 300 ? 'not a DiscoverResult: try initialize' : `HTTP ${answer.status} without a modern error body: try initialize`);
  }

  // 2. initialize (2025 era).
  const init = await postStep('initialize', {
    jsonrpc: '2.0',
    id: 'switchyard-probe-2',
    method: 'initialize',
    params: { protocolVersion: STREAMABLE_REVISIONS[0], capabilities: {}, clientInfo },
  });
  if ('error' in init) return fail(`no usable answer to initialize: ${init.error}`);
  {
    const { answer, first } = init;
    const msg = (answer.kind === 'json' ? answer.json : first) as JsonObject | undefined;
    const result = msg?.result as JsonObject | undefined;
    if (answer.status === 401 || answer.status === 403) {
      note('authentication required: not era evidence');
      return fail(`HTTP ${answer.status}: the server wants credentials`);
    }
    if (answer.status < 300 && result && typeof result.protocolVersion === 'string') {
      note(`an InitializeResult at ${result.protocolVersion}: Streamable HTTP`);
      const sid = headerOf(answer.headers, 'mcp-session-id');
      if (sid) {
        // End the probe's session (2025-11-25 basic/transports#session-management SM7).
        await request(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': result.protocolVersion } })
          .then((r) => r.body.dump())
          .catch(() => {});
      }
      return {
        ok: true,
        era: result.protocolVersion,
        transport: 'streamable-http',
        url,
        serverInfo: result.serverInfo as JsonObject,
        capabilities: result.capabilities as JsonObject,
        steps,
      };
    }
    if (![400, 404, 405].includes(answer.status)) {
      note(`HTTP ${answer.status} is not a fallback status (400, 404, 405)`);
      return fail(`initialize answered HTTP ${answer.status}${msg?.error ? ` with ${JSON.stringify(msg.error)}` : ''}`);
    }
    note(`HTTP ${answer.status}: fall back to HTTP+SSE (GET, expect an endpoint event)`);
  }

  // 3. GET, expecting an `endpoint` event first (2024-11-05 basic/transports).
  const sse = await openLegacyStream(url, headers, timeoutMs);
  steps.push({ request: `GET ${path()} (Accept: text/event-stream)`, status: sse.status, excerpt: excerpt(sse.excerpt), error: sse.error, note: sse.note });
  if (!sse.endpoint) {
    sse.close();
    return fail(sse.note);
  }
  let serverInfo: JsonObject | undefined;
  let capabilities: JsonObject | undefined;
  let era = '2024-11-05';
  try {
    const init = await sse.call(
      { jsonrpc: '2.0', id: 'switchyard-probe-3', method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo } },
      timeoutMs,
    );
    steps.push({
      request: `POST ${new URL(sse.endpoint).pathname} initialize`,
      status: init.postStatus,
      excerpt: excerpt(JSON.stringify(init.reply)),
      note: 'reply read from the stream',
    });
    const result = init.reply?.result as JsonObject | undefined;
    serverInfo = result?.serverInfo as JsonObject | undefined;
    capabilities = result?.capabilities as JsonObject | undefined;
    if (typeof result?.protocolVersion === 'string') era = result.protocolVersion;
  } catch (err) {
    steps.push({
      request: `POST ${new URL(sse.endpoint).pathname} initialize`,
      error: (err as Error).message,
      note: 'the endpoint event came, but initialize got no reply',
    });
  } finally {
    sse.close();
  }
  return { ok: true, era, transport: 'http+sse', url, endpoint: sse.endpoint, serverInfo, capabilities, steps };
}

/** An open HTTP+SSE stream (2024-11-05) with its endpoint. */
export interface LegacyStream {
  status?: number;
  endpoint?: string;
  excerpt?: string;
  error?: string;
  note: string;
  /** POSTs one message to the endpoint and waits for the stream's message with the same id. */
  call(msg: JsonObject, timeoutMs: number): Promise<{ postStatus: number; reply: JsonObject | undefined }>;
  close(): void;
  /** When set, receives every stream message no `call` is waiting for. */
  onMessage?: (m: JsonObject) => void;
  /** When set, called once when the stream ends. */
  onEnd?: () => void;
}

/**
 * GETs `url` as an HTTP+SSE client and waits (bounded) for the `endpoint` event; resolves the
 * endpoint against the stream URL and refuses one on another origin.
 * @see 2024-11-05 basic/transports (HTTP with SSE: the first event is `endpoint`)
 */
export async function openLegacyStream(url: string, headers: Record<string, string>, timeoutMs: number): Promise<LegacyStream> {
  const ac = new AbortController();
  const waiting = new Map<unknown, (m: JsonObject) => void>();
  const hooks: { onMessage?: (m: JsonObject) => void; onEnd?: () => void } = {};
  const base = {
    call: async () => {
      throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'no endpoint' });
    },
    close: () => ac.abort(),
  };
  let res;
  try {
    res = await request(url, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream' },
      signal: ac.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: 0,
    });
  } catch (err) {
    return { ...base, error: (err as Error).message, note: 'no answer to the GET' };
  }
  const ct = String(res.headers['content-type'] ?? '');
  if (res.statusCode !== 200 || !ct.startsWith('text/event-stream')) {
    const text = await readText(res.body, 64 * 1024).catch(() => '');
    return { ...base, status: res.statusCode, excerpt: text, note: `no HTTP+SSE stream either (HTTP ${res.statusCode}, ${ct || 'no content type'})` };
  }
  let endpoint: string | undefined;
  let problem: string | undefined;
  const gotEndpoint = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    const messages = sseMessages(res.body, DEFAULT_LIMITS, (e) => {
      if (e.event === 'endpoint' && endpoint === undefined && problem === undefined) {
        const u = new URL(e.data, url);
        if (u.origin !== new URL(url).origin) problem = `endpoint ${u.href} is on another origin: refused`;
        else endpoint = u.href;
        clearTimeout(timer);
        resolve();
      }
    });
    void (async () => {
      try {
        for await (const m of messages) {
          const w = m.method === undefined ? waiting.get(m.id) : undefined;
          if (w) {
            waiting.delete(m.id);
            w(m);
          } else hooks.onMessage?.(m);
        }
      } catch {
        // stream ended or broke; callers time out
      }
      clearTimeout(timer);
      resolve();
      hooks.onEnd?.();
    })();
  });
  await gotEndpoint;
  const note = endpoint
    ? `an endpoint event: HTTP+SSE, POST to ${new URL(endpoint).pathname}${new URL(endpoint).search}`
    : (problem ?? `no endpoint event within ${timeoutMs} ms`);
  const out: LegacyStream = {
    status: res.statusCode,
    endpoint,
    excerpt: endpoint ? `event: endpoint, data: ${new URL(endpoint).pathname}${new URL(endpoint).search}` : undefined,
    note,
    async call(msg, ms) {
      if (!endpoint) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'no endpoint' });
      const reply = new Promise<JsonObject | undefined>((resolve) => {
        const t = setTimeout(() => resolve(undefined), ms);
        waiting.set(msg.id, (m) => {
          clearTimeout(t);
          resolve(m);
        });
      });
      const r = await request(endpoint, { method: 'POST', body: JSON.stringify(msg), headers: { ...headers, 'content-type': 'application/json' } });
      const text = await readText(r.body, 1 << 20).catch(() => '');
      // A legacy server that wrongly answers in the POST body: take that as the reply.
      if (r.statusCode === 200 && text.trim().startsWith('{')) {
        try {
          const m = JSON.parse(text) as JsonObject;
          if (m.id === msg.id) return { postStatus: r.statusCode, reply: m };
        } catch {
          // not JSON: wait for the stream
        }
      }
      return { postStatus: r.statusCode, reply: await reply };
    },
    close: () => ac.abort(),
    set onMessage(f: ((m: JsonObject) => void) | undefined) {
      hooks.onMessage = f;
    },
    set onEnd(f: (() => void) | undefined) {
      hooks.onEnd = f;
    },
  };
  return out;
}
