// The admin listener: health, readiness, Prometheus metrics, /status.json and the status page, on
// a fastify instance of its own (never the MCP listener), bound to loopback by default.

import Fastify, { type FastifyReply } from 'fastify';
import { Counter } from 'prom-client';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { listenFailed, SwitchyardError, type ErrorCode } from '../core/errors.js';
import { isLoopbackHost } from '../core/loopback.js';
import { authority } from '../core/url-text.js';
import type { Logger } from '../log/logger.js';
import { Lines } from '../log/lines.js';
import { createIntervalLine } from '../core/interval-line.js';
import { writeRawAnswer } from '../io/raw-answer.js';
import { guardConnections, type ConnectionCloseEvent } from '../io/connection-guard.js';
import { deferredSchemaCompilers } from '../io/fastify-compilers.js';
import type { Metrics } from '../telemetry/metrics.js';
import { STATUS_PAGE_CSS, STATUS_PAGE_HTML, STATUS_PAGE_SCRIPT } from './page.js';
import type { StatusRecorder, StatusSource } from './status.js';

/** The product default host of the admin listener (loopback). */
export const ADMIN_DEFAULT_HOST = '127.0.0.1';
/** The product default port of the admin listener. */
export const ADMIN_DEFAULT_PORT = 7601;
/** Open admin connections in all, by default; one more makes an idle one close, or is closed at accept when none is idle. */
export const ADMIN_DEFAULT_MAX_CONNECTIONS = 64;
/**
 * Open admin connections from one remote address, by default (config `admin.maxConnectionsPerAddress`,
 * whose schema default must say the same): a kubelet's three probes, a Prometheus scrape and a
 * browser on the status page fit, and one peer cannot hold the 64 that the probes need.
 */
export const ADMIN_DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 8;
/** At most one `admin connection refused` line in this many ms; it counts the refusals since the last one. */
export const ADMIN_REFUSAL_LOG_INTERVAL_MS = 60_000;
/** The counter of connections the admin listener refused at accept, registered on the given metrics' registry. */
export const ADMIN_REFUSED_METRIC = 'switchyard_admin_connections_refused_total';

/**
 * Sent with every admin response. The page loads its own script and stylesheet only, fetches
 * only its own origin and may not be framed.
 * @see W3C Content Security Policy Level 3 §6 (directives); RFC 7034 (X-Frame-Options)
 */
export const ADMIN_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': ADMIN_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
});

/** Paths the admin listener serves (GET and HEAD). */
export const ADMIN_PATHS = ['/', '/status.js', '/status.css', '/status.json', '/healthz', '/readyz', '/metrics'] as const;

/** Inputs of {@link startAdminServer}. */
export interface AdminServerOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 7601; 0 picks a free one). */
  port?: number;
  /** The gateway's view of itself. */
  source: StatusSource;
  /** Served at /metrics; without it /metrics is 404. */
  metrics?: Metrics;
  /** Feeds /status.json and the page. */
  recorder: StatusRecorder;
  /** For the startup line and internal faults. */
  log?: Logger;
  /**
   * Host names (without port) a request's `Host` may name (case and one trailing dot aside).
   * Default: on a loopback address only loopback names, as `isLoopbackHost` reads them
   * (`localhost`, `localhost.`, 127.0.0.0/8, `[::1]`; so a DNS-rebinding page, which sends its
   * own name, cannot read the listener); on any other address, every name.
   */
  allowedHosts?: readonly string[];
  /**
   * Open connections at most (default 64); at it, the connection idle longest is closed to make
   * room for a new one, which is closed at accept only when none is idle.
   */
  maxConnections?: number;
  /**
   * Open connections from one remote address at most (default 8; `::ffff:a.b.c.d` and `a.b.c.d`
   * are one address); one more is closed at accept, before a byte is read.
   */
  maxConnectionsPerAddress?: number;
}

/** A running admin listener. */
export interface AdminServer {
  /** Where it listens: host, port and the base URL (`http://127.0.0.1:7601/`). */
  address(): { host: string; port: number; url: string };
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** A host name in lower case without its one trailing dot (RFC 1034 §3.1: `localhost.` names `localhost`). */
function withoutTrailingDot(name: string): string {
  const h = name.toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/;

/**
 * The host name of a `Host` header value (lower-case, IPv6 in brackets); undefined when it is
 * missing or not `host[:port]`.
 * @see RFC 9110 §7.2; RFC 3986 §3.2.2
 */
function hostnameOf(header: string | undefined): string | undefined {
  const m = header === undefined ? null : HOST_HEADER.exec(header.toLowerCase());
  return m ? m[1] : undefined;
}

function refuse(reply: FastifyReply, code: ErrorCode, headers?: Record<string, string>): FastifyReply {
  const err = new SwitchyardError(code);
  if (headers) reply.headers(headers);
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: { code, message: err.message } }));
}

/**
 * Counts and logs the connections the guard refused at accept, and the idle ones it closed to make
 * room: the metric for each, each kind's log line at most once per
 * {@link ADMIN_REFUSAL_LOG_INTERVAL_MS}, so a peer that opens thousands a second writes one line a
 * minute. A first-byte close is no refusal (the connection was served its slot).
 */
function refusalReporter(log: Logger | undefined, metrics: Metrics | undefined): (e: ConnectionCloseEvent) => void {
  // One counter per registry: a second admin listener on the same metrics (a restart in a test) counts on.
  let counter = metrics?.registry.getSingleMetric(ADMIN_REFUSED_METRIC) as Counter | undefined;
  if (metrics && !counter) {
    counter = new Counter({
      name: ADMIN_REFUSED_METRIC,
      help: 'Connections the admin listener closed unread: per_address (the address had admin.maxConnectionsPerAddress open), at_limit (64 were open, none idle), evicted_idle (an idle one closed at the 64 to make room for a new one).',
      labelNames: ['reason'],
      registers: [metrics.registry],
    });
    counter.inc({ reason: 'per_address' }, 0);
    counter.inc({ reason: 'at_limit' }, 0);
    counter.inc({ reason: 'evicted_idle' }, 0);
  }
  const line = createIntervalLine(ADMIN_REFUSAL_LOG_INTERVAL_MS);
  const evictedLine = createIntervalLine(ADMIN_REFUSAL_LOG_INTERVAL_MS);
  return (e) => {
    if (e.reason === 'first-byte') return;
    counter?.inc({ reason: e.reason.replace('-', '_') });
    if (e.reason === 'evicted-idle') {
      const evicted = evictedLine.hit();
      // The address whose idle connection went, and how many went since the previous line.
      if (evicted !== undefined) log?.warn({ remoteAddress: e.remoteAddress, evicted }, Lines.adminConnectionEvicted);
      return;
    }
    const refused = line.hit();
    if (refused === undefined) return;
    // The address of the refusal that writes the line; `refused` counts it and those the interval held back.
    log?.warn({ reason: e.reason, remoteAddress: e.remoteAddress, refused }, Lines.adminConnectionRefused);
  };
}

/**
 * Starts the admin listener:
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process serves;
 * - `GET /readyz`: 200 `{"ready":true,"reasons":[]}` when `source.ready().ready`, else 503
 *   `{"ready":false,"reasons":[…]}`; 503 with reason `draining` as soon as `source.draining()`;
 *   either with `"degraded":[…]` added when `source.ready().degraded` names anything;
 * - `GET /metrics`: the Prometheus text exposition, with the registry's content type;
 * - `GET /status.json`: `recorder.snapshot(source)`;
 * - `GET /`: the status page (with `/status.js` and `/status.css`).
 * Every response carries {@link ADMIN_CSP}, `X-Content-Type-Options: nosniff` and `Cache-Control:
 * no-store`. Connections: `maxConnections` in all and `maxConnectionsPerAddress` from one address;
 * one over the address's bound, or over the total while every open connection has a request
 * under way, is closed at accept, unread, counted in {@link ADMIN_REFUSED_METRIC} (`reason`
 * `per_address` or `at_limit`, when `metrics` are given) and logged at warn as `admin connection
 * refused` at most once per {@link ADMIN_REFUSAL_LOG_INTERVAL_MS} (with `refused`, the count since
 * the last line); at the total with one idle, the one idle longest is closed to make room instead
 * (`evicted_idle`; `admin idle connection closed to make room`, with `evicted`, as often).
 * Other paths are 404, other methods 405 (CONNECT too), answered before any body is read and
 * with the connection closed; a disallowed `Host` 403; error bodies are
 * `{"error":{"code":"SWY_ERR_…","message":"…"}}`.
 * @throws SwitchyardError SWY_ERR_LISTEN_FAILED when the address cannot be bound;
 *   SWY_ERR_CONFIG_INVALID when a connection bound is not a positive integer
 * @see RFC 9110 §15.5.6 (405 and Allow); RFC 9110 §7.2 (Host); RFC 9112 §9.6 (a server may close a connection)
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const host = options.host ?? ADMIN_DEFAULT_HOST;
  const port = options.port ?? ADMIN_DEFAULT_PORT;
  const { source, metrics, recorder, log } = options;
  // Which `Host` names are served: the given list (case and one trailing dot normalized on both
  // sides, as the MCP listener's allowlist does), else on a loopback bind every loopback name by
  // the one shared rule (`localhost` and `localhost.`, 127.0.0.0/8, `::1` in any spelling: RFC
  // 6761 §6.3, RFC 1034 §3.1), else any.
  const listed = options.allowedHosts ? new Set(options.allowedHosts.map(withoutTrailingDot)) : undefined;
  const allowed: ((name: string) => boolean) | undefined = listed
    ? (name) => listed.has(withoutTrailingDot(name))
    : isLoopbackHost(host)
      ? isLoopbackHost
      : undefined;

  const app = Fastify({
    schemaController: deferredSchemaCompilers(),
    logger: false,
    bodyLimit: 1024,
    // 10 s for a connection that sends nothing, as for a request: with 30 s, 64 idle sockets kept
    // every probe out for 30 s, a liveness probe's whole failure budget in deploy/kubernetes.
    connectionTimeout: 10_000,
    requestTimeout: 10_000,
    keepAliveTimeout: 5_000,
    // Node checks the request timeout on this interval (default 30 s, which made a request whose
    // head never ends last 30–40 s, not 10).
    http: { connectionsCheckingInterval: 1_000 },
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  // One peer may hold a few connections, not all of them: with only the total, anyone who reaches
  // the port (deploy/ binds 0.0.0.0) kept /healthz and /readyz unanswered for 10 s at a time, and
  // again, and the orchestrator restarted a healthy replica. The first-byte deadline is the
  // connection timeout's, as before.
  const connections = guardConnections(app.server, {
    maxConnections: options.maxConnections ?? ADMIN_DEFAULT_MAX_CONNECTIONS,
    maxPerAddress: options.maxConnectionsPerAddress ?? ADMIN_DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
    firstByteTimeoutMs: 10_000,
    // At the 64, an idle connection makes room for a new one: peers holding connections unused,
    // from however many addresses, cannot keep a probe out (docs/operations.md).
    evictIdleAtLimit: true,
    onClose: refusalReporter(log, metrics),
  });
  app.addHook('onClose', (_app, done) => {
    connections.close();
    done();
  });
  // RFC 9110 §9.3.6: CONNECT asks for a tunnel; node:http would destroy its socket unanswered.
  // 405 with Allow (§15.5.6), the security headers and the admin error body, then the close.
  app.server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    const code: ErrorCode = 'SWY_ERR_ADMIN_METHOD_NOT_ALLOWED';
    const err = new SwitchyardError(code);
    const fields = { ...SECURITY_HEADERS, allow: 'GET, HEAD', 'content-type': 'application/json; charset=utf-8' };
    writeRawAnswer(socket, err.status, fields, JSON.stringify({ error: { code, message: err.message } }));
  });

  app.addHook('onRequest', async (req, reply) => {
    reply.headers(SECURITY_HEADERS);
    if (allowed === undefined) return;
    const name = hostnameOf(req.headers.host);
    // A page on an attacker's origin that rebinds its name to 127.0.0.1 still sends its own Host.
    if (name === undefined || !allowed(name)) return refuse(reply, 'SWY_ERR_ADMIN_HOST_FORBIDDEN');
  });
  // Only GET and HEAD are served, and neither has a body: any other method is answered before its
  // body is read, and the connection closed. Waiting for a body a peer never sends kept its
  // request under way for the 10 s request timeout, a connection the guard cannot give to a probe.
  app.addHook('onRequest', async (req, reply) => {
    if (req.method === 'GET' || req.method === 'HEAD') return;
    reply.header('connection', 'close');
    const path = req.url.split('?')[0];
    if ((ADMIN_PATHS as readonly string[]).includes(path)) return refuse(reply, 'SWY_ERR_ADMIN_METHOD_NOT_ALLOWED', { allow: 'GET, HEAD' });
    return refuse(reply, 'SWY_ERR_ADMIN_NOT_FOUND');
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    if ((ADMIN_PATHS as readonly string[]).includes(path)) return refuse(reply, 'SWY_ERR_ADMIN_METHOD_NOT_ALLOWED', { allow: 'GET, HEAD' });
    return refuse(reply, 'SWY_ERR_ADMIN_NOT_FOUND');
  });
  app.setErrorHandler((err: { statusCode?: number }, _req, reply) => {
    if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) return refuse(reply, 'SWY_ERR_HTTP_FRAMING');
    log?.error({ err }, 'admin request failed');
    return refuse(reply, 'SWY_ERR_INTERNAL_FAULT');
  });

  app.get('/healthz', async (_req, reply) => reply.type('application/json; charset=utf-8').send('{"status":"ok"}'));
  app.get('/readyz', async (_req, reply) => {
    const draining = source.draining();
    const now = source.ready();
    const r = draining ? { ready: false, reasons: [...now.reasons.filter((x) => x !== 'draining'), 'draining'] } : now;
    const body: { ready: boolean; reasons: string[]; degraded?: string[] } = r.ready ? { ready: true, reasons: [] } : { ready: false, reasons: [...r.reasons] };
    // A shared dependency that is down is named, but does not make this replica unready.
    if (now.degraded !== undefined && now.degraded.length > 0) body.degraded = [...now.degraded];
    return reply
      .code(r.ready ? 200 : 503)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(body));
  });
  app.get('/metrics', async (_req, reply) => {
    if (!metrics) return refuse(reply, 'SWY_ERR_ADMIN_NOT_FOUND');
    const text = await metrics.metrics();
    return reply.type(metrics.contentType).send(text);
  });
  app.get('/status.json', async (_req, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify(recorder.snapshot(source))));
  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(STATUS_PAGE_HTML));
  app.get('/status.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(STATUS_PAGE_SCRIPT));
  app.get('/status.css', async (_req, reply) => reply.type('text/css; charset=utf-8').send(STATUS_PAGE_CSS));

  try {
    await app.listen({ host, port });
  } catch (err) {
    await app.close().catch(() => {});
    throw listenFailed('admin listener', host, port, err);
  }
  const bound = app.server.address();
  const at = typeof bound === 'object' && bound !== null ? { host: bound.address, port: bound.port } : { host, port };
  const url = `http://${authority(at.host, at.port)}/`;
  log?.info({ url }, 'admin listener up');

  let closing: Promise<void> | undefined;
  return {
    address: () => ({ ...at, url }),
    close() {
      closing ??= app.close();
      return closing;
    },
  };
}
