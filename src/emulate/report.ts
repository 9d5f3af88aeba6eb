// The client-fallback bench's record of what a client did, and the verdict drawn from it.

import type { RequestId } from '../core/message.js';
import { terminalLine } from '../core/terminal-text.js';

/** One HTTP request the client made, as the bench saw and answered it. */
export interface RequestRecord {
  /** 1, 2, … in arrival order. */
  seq: number;
  /** Arrival time, ISO 8601. */
  time: string;
  method: string;
  /** Path without the query. */
  path: string;
  /** The query string without `?` ('' when none). */
  query: string;
  /** The headers that matter for era detection and fallback (authorization: present or not). */
  headers: Record<string, string>;
  /**
   * The JSON-RPC message of a POST body, when it parsed. `id` as sent, with its type: a string or
   * a number (an integer beyond 2^53 as a bigint), so `"1"` and `1` differ (JSON-RPC 2.0 §4).
   */
  rpc?: { kind: 'request' | 'notification' | 'response' | 'batch' | 'invalid'; method?: string; id?: RequestId; modern?: boolean; protocolVersion?: string };
  /**
   * Why a POST's body was not read, so that `rpc` is absent: the gateway refused the request at
   * its head, before reading the body (docs/edge.md): `Origin refused`, `Host refused` (403, or
   * 400 for a missing or invalid Host), `transfer coding refused` (501), `over maxBodyBytes` (413),
   * `refused at its head` (anything else).
   */
  bodyUnread?: string;
  /** The session the request belongs to (Mcp-Session-Id, `sessionId`, or the one it opened). */
  session?: string;
  /** HTTP status of the answer (0 while none was written). */
  status: number;
  /** True when the answer is an SSE stream. */
  sse: boolean;
  /** The `endpoint` event data sent on this stream. */
  endpoint?: string;
  /**
   * True when the bench held back the `endpoint` event: `--no-endpoint`, or `--endpoint-delay`
   * until the event is written (a stream closed before then never gets it).
   */
  endpointWithheld?: boolean;
  /** `message` events sent on this stream. */
  events: number;
  /** True when the bench cut the stream (`--drop-stream-after`). */
  dropped?: boolean;
  /** The knob that produced the answer, when one did. */
  knob?: string;
  /**
   * JSON-RPC responses sent to the client on this answer (JSON body or SSE events); `id` typed as
   * in `rpc`, so a reply matches only the request whose id has the same type and value.
   */
  replies: Array<{ id: RequestId; ok: boolean; protocolVersion?: string }>;
  /** Time to the answer's head, ms. */
  ms?: number;
}

/** What the client ended up doing. */
export interface Verdict {
  /** The transport the client got working, if any. */
  transport: 'http+sse' | 'streamable-http' | 'stateless-2026' | null;
  /** True when the first POST on the MCP path was refused and the client then got another transport working. */
  fellBack: boolean;
  /** True when the client tried something else after a refusal (whether it worked or not). */
  fallbackAttempted: boolean;
  /** `tools/call` requests that got a result. */
  toolCalls: number;
  /** The protocol version the client's successful initialize negotiated. */
  negotiated?: string;
  /**
   * Streams the client opened again after the bench dropped one (`--drop-stream-after`): each
   * dropped stream pairs with the client's next GET that opened a stream. 0 when none.
   */
  reconnects: number;
  /** One line for people, e.g. `fell back to HTTP+SSE`. */
  text: string;
}

/** Where the bench serves what. */
export interface ReportPaths {
  mcpPath: string;
  ssePath: string;
  /** Every path POSTs to an `endpoint` URI arrive on. */
  messagePaths: readonly string[];
}

function shortQuery(q: string): string {
  if (!q) return '';
  return '?' + q.replace(/(sessionId=)[^&]+/g, '$1…');
}

/**
 * The GETs of one client's records that opened a stream again after the bench dropped one
 * (`--drop-stream-after`): in arrival order, each dropped stream pairs with the next GET answered
 * with a stream (an HTTP+SSE reconnect, or a 2025 GET stream, resumed or not).
 * @param records one client's records, in arrival order (`clientsOf`).
 */
export function reconnectsIn(records: readonly RequestRecord[]): Set<RequestRecord> {
  const out = new Set<RequestRecord>();
  let unpaired = 0;
  for (const r of records) {
    if (r.method === 'GET' && r.sse && unpaired > 0) {
      out.add(r);
      unpaired--;
    }
    if (r.dropped) unpaired++;
  }
  return out;
}

/**
 * One step of the client's path, e.g. `POST /mcp (initialize) → 405`, `POST /mcp (body not read:
 * Host refused) → 403` for a POST refused before its body was read (`bodyUnread`), or `GET /mcp →
 * endpoint (reconnect)` for a GET that opened a stream again after a dropped one ({@link reconnectsIn}).
 */
export function describeStep(r: RequestRecord, reconnect = false): string {
  const what = r.rpc?.method
    ? ` (${r.rpc.method})`
    : r.rpc?.kind === 'response'
      ? ' (response)'
      : r.rpc?.kind === 'batch'
        ? ' (batch)'
        : r.bodyUnread !== undefined
          ? ` (body not read: ${r.bodyUnread})`
          : '';
  let outcome: string;
  if (r.status === 0) outcome = 'no answer';
  else if (r.sse && r.endpoint !== undefined) outcome = 'endpoint';
  else if (r.sse && r.endpointWithheld) outcome = '200 stream, no endpoint';
  else if (r.sse) outcome = `${r.status} stream`;
  else outcome = String(r.status);
  const tags = [r.knob, r.dropped ? 'dropped' : undefined].filter(Boolean);
  return `${r.method} ${r.path}${shortQuery(r.query)}${what} → ${outcome}${reconnect ? ' (reconnect)' : ''}${tags.length ? ` [${tags.join(', ')}]` : ''}`;
}

/** The client's path with runs of identical steps folded (`… ×3`). */
export function describePath(records: readonly RequestRecord[]): string[] {
  const out: Array<{ text: string; n: number }> = [];
  const reopened = reconnectsIn(records);
  for (const r of records) {
    const text = describeStep(r, reopened.has(r));
    const last = out[out.length - 1];
    if (last && last.text === text) last.n++;
    else out.push({ text, n: 1 });
  }
  return out.map((s) => (s.n > 1 ? `${s.text} ×${s.n}` : s.text));
}

const ok2xx = (s: number) => s >= 200 && s < 300;

/** Draws the verdict from the records. */
export function verdictOf(records: readonly RequestRecord[], paths: ReportPaths): Verdict {
  const isMessagePath = (r: RequestRecord) => paths.messagePaths.includes(r.path);
  const mcpPosts = records.filter((r) => r.method === 'POST' && r.path === paths.mcpPath);
  const first = mcpPosts[0];
  const refusedFirst = first !== undefined && first.status >= 400;
  const answered = (id: RequestId | undefined, session: string | undefined, ok = true) =>
    id !== undefined && records.some((x) => (session === undefined || x.session === session) && x.replies.some((p) => p.id === id && p.ok === ok));

  // HTTP+SSE: an initialize posted to the endpoint was accepted and answered on the stream.
  const fallbackInit = records.find(
    (r) => isMessagePath(r) && r.method === 'POST' && ok2xx(r.status) && r.rpc?.method === 'initialize' && answered(r.rpc.id, r.session),
  );
  // Streamable HTTP: an initialize on the MCP path got its result.
  const streamInit = mcpPosts.find((r) => r.rpc?.method === 'initialize' && ok2xx(r.status) && r.replies.some((p) => p.ok));
  // 2026-07-28: a request with modern _meta got a result.
  const stateless = mcpPosts.find((r) => r.rpc?.modern && ok2xx(r.status) && r.replies.some((p) => p.ok));

  const toolCalls = records.filter(
    (r) => r.rpc?.method === 'tools/call' && (r.replies.some((p) => p.ok && p.id === r.rpc?.id) || answered(r.rpc.id, r.session)),
  ).length;
  const negotiated = (init: RequestRecord | undefined): string | undefined => {
    if (!init) return undefined;
    for (const x of records)
      for (const p of x.replies) if (p.id === init.rpc?.id && p.protocolVersion && (x === init || x.session === init.session)) return p.protocolVersion;
    return undefined;
  };
  const reopened = reconnectsIn(records);
  const reconnects = reopened.size;
  // An HTTP+SSE reconnect opens a new session (the spec has no resumption in 2024-11-05): a client
  // that goes on POSTing there without an initialize is refused, which the verdict must say.
  const uninitialized = [...reopened].some(
    (g) => g.endpoint !== undefined && !records.some((x) => x.session === g.session && x.method === 'POST' && x.rpc?.method === 'initialize'),
  );
  const again =
    reconnects > 0 ? `; reconnected ×${reconnects} after a dropped stream${uninitialized ? ', to a new HTTP+SSE session it did not initialize' : ''}` : '';
  const calls = (toolCalls > 0 ? `; called a tool (tools/call answered ×${toolCalls})` : '') + again;

  const afterFirst = first ? records.filter((r) => r.seq > first.seq) : [];
  const triedSse = afterFirst.filter((r) => r.method === 'GET' && (r.path === paths.mcpPath || r.path === paths.ssePath));
  const fallbackAttempted = refusedFirst && afterFirst.some((r) => r !== first && (r.method !== 'GET' || !r.path.startsWith('/.well-known/')));

  // The spec's fallback to HTTP+SSE follows a 4xx to the POST; a 5xx is the server failing, no
  // sign of an older server. A client that falls back on one is told so, after the outcome.
  // @see 2025-11-25 basic/transports#backwards-compatibility (400, 404 or 405); 2025-03-26 and 2025-06-18 (any 4xx)
  const after5xx =
    refusedFirst && first.status >= 500 ? `; it fell back on HTTP ${first.status}, which is no reason to (the spec falls back on a 4xx only)` : '';
  if (fallbackInit) {
    const v = negotiated(fallbackInit);
    const fellBack = refusedFirst && fallbackInit.seq > first.seq;
    return {
      transport: 'http+sse',
      fellBack,
      fallbackAttempted,
      toolCalls,
      reconnects,
      negotiated: v,
      text: `${fellBack ? 'fell back to HTTP+SSE' : 'used HTTP+SSE'}${v ? ` (negotiated ${v})` : ''}${calls}${fellBack ? after5xx : ''}`,
    };
  }
  if (streamInit) {
    const v = negotiated(streamInit);
    const probeRefused = mcpPosts.some((r) => r.seq < streamInit.seq && r.status >= 400);
    const probe = mcpPosts.find((r) => r.seq < streamInit.seq && r.status >= 400 && r.rpc?.modern);
    const how = probe
      ? `fell back from the 2026-07-28 probe (${probe.rpc?.method ?? 'POST'} → ${probe.status}) to initialize`
      : probeRefused
        ? `retried after ${first.status} and used Streamable HTTP`
        : 'used Streamable HTTP (initialize)';
    return {
      transport: 'streamable-http',
      fellBack: probeRefused,
      fallbackAttempted,
      toolCalls,
      reconnects,
      negotiated: v,
      text: `${how}${v ? ` (negotiated ${v})` : ''}${calls}`,
    };
  }
  if (stateless) {
    const retried = refusedFirst && stateless.seq > first.seq;
    return {
      transport: 'stateless-2026',
      fellBack: retried,
      fallbackAttempted,
      toolCalls,
      reconnects,
      text: `${retried ? `retried after ${first.status} and used` : 'used'} 2026-07-28 stateless HTTP${calls}`,
    };
  }
  let text: string;
  if (records.length === 0) text = 'no client requests';
  else if (!first) {
    const g = records.find((r) => r.method === 'GET' && (r.path === paths.mcpPath || r.path === paths.ssePath));
    text = g ? `did not connect: ${sseFailure(g, records, isMessagePath)}` : 'did not connect';
  } else if (refusedFirst && triedSse.length > 0)
    text = `tried to fall back to HTTP+SSE but failed: ${sseFailure(triedSse[triedSse.length - 1], records, isMessagePath)}${after5xx}`;
  else if (refusedFirst && !afterFirst.some((r) => r.method === 'POST' && isMessagePath(r))) {
    const tries = mcpPosts.map((r) =>
      mcpPosts.length > 1 && r.rpc?.method
        ? `${r.status} (${r.rpc.method})`
        : mcpPosts.length > 1 && r.bodyUnread !== undefined
          ? `${r.status} (body not read: ${r.bodyUnread})`
          : String(r.status),
    );
    text = `did not fall back (gave up after POST ${paths.mcpPath} → ${tries.join(', ')})`;
  } else text = 'did not connect';
  return { transport: null, fellBack: false, fallbackAttempted, toolCalls, reconnects, text: text + again };
}

function sseFailure(g: RequestRecord, records: readonly RequestRecord[], isMessagePath: (r: RequestRecord) => boolean): string {
  if (!g.sse) return `GET ${g.path} → ${g.status}`;
  if (g.endpointWithheld) return 'the stream sent no endpoint event';
  const posts = records.filter((r) => r.seq > g.seq && r.method === 'POST' && isMessagePath(r));
  if (posts.length === 0) return `the client never POSTed to the endpoint (${g.endpoint ?? 'none'})`;
  const bad = posts.find((r) => !ok2xx(r.status));
  if (bad) return `POST ${bad.path} → ${bad.status}`;
  return 'initialize got no answer on the stream';
}

/**
 * The records of each client, in the order the clients came. A session ties requests together:
 * a session's requests belong to the client that opened it, and the requests without a session
 * that came before (a refused probe, the GET that opened an HTTP+SSE stream) belong to the next
 * session opened by a request from the same `User-Agent`. A GET that opens a new session's stream
 * with no such request before it, after the bench dropped a stream of a client with the same
 * `User-Agent` (`--drop-stream-after`), is that client reconnecting: an HTTP+SSE client's event
 * source opens a new stream, and so a new session, on its own (the v1 and v2 SDKs'
 * `SSEClientTransport`); each dropped stream is taken by one such GET at most, the latest dropped
 * first. A new client that follows the spec's fallback POSTs before its GET, so it stays apart.
 * Sessionless requests that no session follows (a stateless 2026-07-28 client, or one that never
 * connected) form one client per `User-Agent`. Bounded by `records`: one entry per record, and
 * at most one per client in each map.
 * @see 2024-11-05 basic/transports (HTTP with SSE: the endpoint event on each connection)
 */
export function clientsOf(records: readonly RequestRecord[]): RequestRecord[][] {
  const bySession = new Map<string, RequestRecord[]>();
  const clients: RequestRecord[][] = [];
  const pending = new Map<string, RequestRecord[]>();
  /** Per client, the streams the bench dropped that no GET has opened again yet. */
  const drops = new Map<RequestRecord[], number>();
  /** The clients with such a stream, the latest drop last. */
  const dropped: RequestRecord[][] = [];
  const agent = (r: RequestRecord) => r.headers['user-agent'] ?? '';
  const reconnecting = (r: RequestRecord): RequestRecord[] | undefined => {
    if (r.method !== 'GET' || !r.sse || (pending.get(agent(r))?.length ?? 0) > 0) return undefined;
    for (let i = dropped.length - 1; i >= 0; i--) {
      const c = dropped[i];
      if (agent(c[0]) !== agent(r)) continue;
      const left = (drops.get(c) ?? 0) - 1;
      if (left > 0) drops.set(c, left);
      else {
        drops.delete(c);
        dropped.splice(i, 1);
      }
      return c;
    }
    return undefined;
  };
  for (const r of records) {
    if (r.session === undefined) {
      const list = pending.get(agent(r)) ?? [];
      list.push(r);
      pending.set(agent(r), list);
      continue;
    }
    let c = bySession.get(r.session);
    if (!c) {
      c = reconnecting(r);
      if (!c) {
        c = pending.get(agent(r)) ?? [];
        pending.delete(agent(r));
        clients.push(c);
      }
      bySession.set(r.session, c);
    }
    c.push(r);
    if (r.dropped) {
      drops.set(c, (drops.get(c) ?? 0) + 1);
      const at = dropped.indexOf(c);
      if (at >= 0) dropped.splice(at, 1);
      dropped.push(c);
    }
  }
  for (const list of pending.values()) clients.push(list);
  for (const c of clients) c.sort((a, b) => a.seq - b.seq);
  return clients.sort((a, b) => a[0].seq - b[0].seq);
}

/**
 * The printed report: each client's path, then its verdict (numbered when several clients came).
 * What the client sent (its `User-Agent`, paths, methods) is shown with control and
 * bidirectional characters escaped ({@link terminalLine}).
 * @returns lines ending in `\n`.
 */
export function formatReport(records: readonly RequestRecord[], paths: ReportPaths, header?: string): string {
  const lines = header ? [header] : [];
  const clients = clientsOf(records);
  if (clients.length === 0) return [...lines, '(no requests)', `verdict: ${verdictOf([], paths).text}`].join('\n') + '\n';
  clients.forEach((c, i) => {
    const tag = clients.length > 1 ? `client ${i + 1}${c[0].headers['user-agent'] ? ` (${c[0].headers['user-agent']})` : ''}: ` : '';
    lines.push(`${tag}${describePath(c).join('; ')}`);
    lines.push(`${clients.length > 1 ? `client ${i + 1} ` : ''}verdict: ${verdictOf(c, paths).text}`);
  });
  return lines.map(terminalLine).join('\n') + '\n';
}
