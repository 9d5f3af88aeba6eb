// HTTP upstreams of every era behind one Upstream: the era is probed (`auto`), follows each
// client's era (`match-client`), or is pinned; the per-era connectors do the wire work.

import { StreamGate, streamPlaces } from './stream-gate.js';
import { Agent, Pool } from 'undici';
import type { CallHolder } from '../../core/calls.js';
import type { UpstreamStateMessage } from '../../core/diagnostics.js';
import type { CoreLog } from '../../core/exchange.js';
import type { EraClients } from '../../core/era.js';
import { SwitchyardError } from '../../core/errors.js';
import type { Limits } from '../../core/limits.js';
import type { Implementation, RequestContext } from '../../core/request.js';
import type { Upstream } from '../../core/upstream.js';
import { isInitializeRevision } from '../../core/versions.js';
import { probeUrl, type ProbeVerdict } from '../probe.js';
import { publishState } from '../state.js';
import { createHttpSseConnector } from './http-sse.js';
import type { Isolation } from './pool.js';
import { outboundHeaders, type Connector, type ConnectorOptions, type OutboundCredentials, type SseSetting } from './connector.js';
import { createSessionsConnector } from './sessions.js';
import { createStatelessConnector } from './stateless.js';
import { serverOfUrl, urlForDisplay } from '../../core/url-text.js';
import { networkErrorWords, upstreamFailure } from './transport.js';
import type { MessageValidator } from '../../core/strict.js';

export type { Isolation } from './pool.js';

/**
 * How an HTTP upstream's era is chosen: `auto` probes (and prefers a dual-era server's 2025
 * sessions, see docs/upstreams.md), `match-client` serves each client in its own era where the
 * server offers it, a revision pins it (no probe).
 */
export type HttpEra = 'auto' | 'match-client' | '2024-11-05' | '2025-03-26' | '2025-06-18' | '2025-11-25' | '2026-07-28';

/** Settings of one HTTP upstream. */
export interface HttpUpstreamOptions {
  /** Name in logs and config. */
  name: string;
  /** The server's MCP URL (for HTTP+SSE: its SSE URL). */
  url: string;
  /** Headers sent on every request (e.g. Authorization for this upstream). */
  headers?: Record<string, string>;
  /** Era choice (default `auto`). */
  era?: HttpEra;
  /** How the operator pinned `era` to 2024-11-05, in their words (named in the advice when the URL serves no HTTP+SSE stream); absent otherwise. */
  sseSetting?: SseSetting;
  /** Stateful eras: one upstream session per client session (default) or one for all. */
  isolation?: Isolation;
  log: CoreLog;
  /** Bounds: `upstream*` timeouts and backoff, `maxSessions`, `maxUpstreamMessageBytes`, parse bounds, `requestTimeoutMs`. */
  limits: Limits;
  /** The gateway's Implementation, sent where a client has none. */
  clientInfo: Implementation;
  /** Holds calls waiting for a 2026 client's input (shared across upstreams). */
  held: CallHolder;
  /** Forward the client's `Authorization` header (default false: never). */
  forwardAuthorization?: boolean;
  /** The upstream's own credential on every request (config `credentials`; never the client's token). */
  credentials?: OutboundCredentials;
  /** What each era sends upstream (built by the composition root from dialects/). */
  eras: EraClients;
  /** Hears every lifecycle change this upstream publishes (its supervisor; see src/upstreams/supervisor.ts). */
  onState?: (m: UpstreamStateMessage) => void;
  /** Strict mode's validator: what the upstream sends for a call or outside one, and what the gateway sends it, are checked against its revision's schema (its handshake is checked by the era clients: strictEraClients in core/strict.ts; docs/strict.md, "Upstreams"); absent when strict mode is off. */
  strict?: MessageValidator;
  /**
   * Where its lifecycle messages go (default `publishState`: the switchyard:upstream:* channels).
   * The runtime mutes a reload's new instance of a changed upstream here until the reload has kept
   * or replaced the running one, whose state and labels those messages would otherwise overwrite.
   */
  publish?: (m: UpstreamStateMessage) => void;
}

/** An HTTP upstream; `era` is known after `start()`. */
export interface HttpUpstream extends Upstream {
  /** The revision spoken (`match-client`: the revisions of the connectors, newest first, joined by `+`). */
  readonly era: string | undefined;
  /** The revision a request from `ctx`'s client is served in. */
  eraFor(ctx: Pick<RequestContext, 'protocolVersion'>): string | undefined;
  /**
   * Checks that the server answers as an MCP server again (the era probe, one step bounded by
   * `upstreamProbeTimeoutMs`), without touching the connectors: the circuit breaker's own trial.
   * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE
   */
  check(): Promise<void>;
}

/**
 * How an operator gives an HTTP upstream its credentials, for the reason of a probe the server
 * refused for want of them (an upstream's `lastError`, `/status.json`, the log): the upstream's
 * config keys (docs/config.md, docs/security.md "Upstream credentials") and the gateway's flag,
 * never `switchyard probe`'s `--header`, which the gateway does not take.
 */
const CREDENTIALS_HINT =
  'give the upstream one in its config: `credentials`, or an Authorization entry in `headers`; with --upstream, --upstream-header Authorization:…';

/** The connectors an upstream runs: one, or under `match-client` one per era the server offers. */
interface Connectors {
  stateless?: Connector;
  sessions?: Connector;
  httpSse?: Connector;
}

/**
 * Creates an HTTP upstream. `start()` finds the era (probe, or the pinned one) and opens what it
 * needs: 2026-07-28 a discovery; the 2025 era a control session; 2024-11-05 a control stream.
 * Resuming held calls is the executor's business, not the upstream's.
 * @throws SwitchyardError SWY_ERR_UPSTREAM_UNAVAILABLE from start() (the URL and the cause, once),
 *   SWY_ERR_UPSTREAM_PROTOCOL (the server answers, but not as its era must)
 */
export function createHttpUpstream(o: HttpUpstreamOptions): HttpUpstream {
  const c: Connectors = {};
  let era: string | undefined;
  // One Agent per upstream: its connections are bounded and its timeouts come from Limits, and
  // one upstream's sockets never wait behind another's.
  // The per-origin pools, kept here so that a stop can cut them: an Agent forgets its pools as
  // soon as `close()` starts, so its own `destroy()` after a `close()` reaches none of them. The
  // Agent closes an origin's pool once its last connection goes and makes a new one on the next
  // request; pools already destroyed are dropped then, so the set holds the live ones only.
  const pools = new Set<Pool>();
  const agent = new Agent({
    factory: (origin, opts) => {
      for (const p of pools) if (p.destroyed) pools.delete(p);
      const pool = new Pool(origin, opts);
      pools.add(pool);
      return pool;
    },
    connections: o.limits.maxUpstreamConnections,
    connect: { timeout: o.limits.upstreamConnectTimeoutMs },
    keepAliveTimeout: o.limits.upstreamKeepAliveTimeoutMs,
    keepAliveMaxTimeout: o.limits.upstreamKeepAliveTimeoutMs,
  });
  // Where the upstream is, read once from its URL: every lifecycle message carries it, so that
  // client spans get `server.address` / `server.port` without reading the URL per request (a
  // probe's redirects stay on the same origin: src/upstreams/http/redirect.ts).
  const server = serverOfUrl(o.url);
  const toChannels = o.publish ?? publishState;
  const publish = (m: UpstreamStateMessage) => {
    if (server !== undefined) {
      m.serverAddress = server.address;
      m.serverPort = server.port;
    }
    toChannels(m);
    o.onState?.(m);
  };
  const co: ConnectorOptions = {
    name: o.name,
    url: o.url,
    headers: { ...(o.headers ?? {}) },
    isolation: o.isolation ?? 'per-session',
    forwardAuthorization: o.forwardAuthorization ?? false,
    ...(o.credentials ? { credentials: o.credentials } : {}),
    log: o.log,
    limits: o.limits,
    clientInfo: o.clientInfo,
    held: o.held,
    dispatcher: agent,
    strict: o.strict,
    ...(o.sseSetting ? { sseSetting: o.sseSetting } : {}),
    // Streams hold their connection for life: some of the Agent's are kept for calls.
    streams: new StreamGate(streamPlaces(o.limits.maxUpstreamConnections, o.limits.streamReserveDivisor)),
  };
  const modern = o.eras.stateless.revisions[0];

  /**
   * A probe that found no era, as the upstream's error: the message in Switchyard's own words
   * (`clientReason`), the operator's with what the server wrote (`reason`: a challenge's
   * `error_description`, a JSON-RPC error's message), which may repeat the credential sent.
   */
  const unfound = (v: ProbeVerdict): SwitchyardError =>
    new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', {
      detail: `${v.networkError !== undefined ? (v.networkWords ?? 'network error') : (v.clientReason ?? v.reason)}`,
      operatorDetail: `${urlForDisplay(o.url)}: ${v.networkError ?? v.reason}`,
    });

  const probe = async (): Promise<ProbeVerdict> => {
    const v = await probeUrl(o.url, o.eras, {
      headers: await outboundHeaders(co, undefined),
      clientInfo: { name: o.clientInfo.name, version: o.clientInfo.version },
      timeoutMs: o.limits.upstreamProbeTimeoutMs,
      backoffMs: o.limits.upstreamBackoffMinMs,
      backoffMaxMs: o.limits.upstreamBackoffMaxMs,
      limits: o.limits,
      dualEra: true,
      dispatcher: agent,
      credentialsHint: CREDENTIALS_HINT,
    });
    if (!v.ok || !v.era) throw unfound(v);
    o.log.info(
      {
        upstream: o.name,
        era: v.era,
        transport: v.transport,
        ...(v.alsoSessions ? { alsoSessions: v.alsoSessions } : {}),
        // Not where: the origin is the configured one, and a same-origin Location's path is most
        // often the configured path (key segment and all) with a slash added; `switchyard probe` shows it.
        ...(v.url !== o.url ? { redirected: true } : {}),
      },
      'upstream probed',
    );
    return v;
  };

  /** The connectors' options at the URL a probe found its era at (after same-origin redirects). */
  const atProbed = (v: ProbeVerdict): ConnectorOptions => (v.url === co.url ? co : { ...co, url: v.url });

  /** The connector a request goes to. */
  const pick = (ctx: Pick<RequestContext, 'protocolVersion'>): Connector | undefined =>
    isInitializeRevision(ctx.protocolVersion) ? (c.sessions ?? c.httpSse ?? c.stateless) : (c.stateless ?? c.sessions ?? c.httpSse);
  /** The connector that describes the upstream and serves gateway-wide subscriptions. */
  const main = (): Connector => {
    const m = c.stateless ?? c.sessions ?? c.httpSse;
    if (!m) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${o.name} is not started` });
    return m;
  };

  return {
    name: o.name,
    get era() {
      return era;
    },
    eraFor(ctx) {
      return pick(ctx)?.revision;
    },
    async start() {
      const want = o.era ?? 'auto';
      publish({ upstream: o.name, state: 'spawn', transport: 'http' });
      try {
        if (want === 'auto') {
          const v = await probe();
          // The connectors talk to where the probe's same-origin 307/308 redirects led (the
          // probe's rule: src/upstreams/http/redirect.ts), not to a URL that answers a redirect.
          const co = atProbed(v);
          // A dual-era server's 2025 session can send elicitation, sampling and roots requests,
          // which its stateless side cannot (docs/upstreams.md, "Which era auto picks").
          if (v.transport === 'http+sse') c.httpSse = await createHttpSseConnector(co, o.eras.httpSse);
          else if (v.transport === 'streamable-http' || v.alsoSessions) c.sessions = await createSessionsConnector(co, o.eras.sessions);
          else c.stateless = await createStatelessConnector(co, o.eras.stateless);
        } else if (want === 'match-client') {
          const v = await probe();
          const co = atProbed(v);
          if (v.transport === 'stateless-http') c.stateless = await createStatelessConnector(co, o.eras.stateless);
          if (v.transport === 'streamable-http' || v.alsoSessions) c.sessions = await createSessionsConnector(co, o.eras.sessions, 'match-client');
          if (v.transport === 'http+sse') c.httpSse = await createHttpSseConnector(co, o.eras.httpSse);
        } else if (want === modern) c.stateless = await createStatelessConnector(co, o.eras.stateless);
        else if (want === '2024-11-05') c.httpSse = await createHttpSseConnector(co, o.eras.httpSse);
        else c.sessions = await createSessionsConnector(co, o.eras.sessions, want);
      } catch (err) {
        await Promise.all(Object.values(c).map((x: Connector) => x.close().catch(() => {})));
        for (const k of Object.keys(c) as Array<keyof Connectors>) delete c[k];
        publish({ upstream: o.name, state: 'down', transport: 'http', error: err });
        // The message already names the URL and the network error: no cause, so that nothing prints it twice.
        if (err instanceof SwitchyardError)
          throw new SwitchyardError(err.code, {
            message: err.message,
            data: err.data,
            ...(err.operatorMessage !== undefined ? { operatorMessage: err.operatorMessage } : {}),
          });
        throw upstreamFailure('SWY_ERR_UPSTREAM_UNAVAILABLE', o.url, networkErrorWords(err), { operatorDetail: (err as Error).message });
      }
      era = [c.stateless, c.sessions, c.httpSse]
        .filter((x): x is Connector => x !== undefined)
        .map((x) => x.revision)
        .join('+');
      publish({ upstream: o.name, state: 'ready', revision: era, transport: 'http' });
    },
    describe() {
      return main().describe();
    },
    async request(ctx) {
      const conn = pick(ctx);
      if (!conn) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${o.name} is not started` });
      return conn.call(ctx);
    },
    subscribe(filter, sink) {
      return main().subscribe(filter, sink);
    },
    subscribeSession(ref, filter, sink) {
      const conn = pick(ref);
      if (!conn) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `${o.name} is not started` });
      return conn.subscribeSession ? conn.subscribeSession(ref, filter, sink) : conn.subscribe(filter, sink);
    },
    release(sessionKey: string) {
      for (const x of [c.stateless, c.sessions, c.httpSse]) x?.release(sessionKey);
    },
    forwardNotification(sessionKey, n) {
      for (const x of [c.sessions, c.httpSse]) x?.forwardNotification?.(sessionKey, n);
    },
    async check() {
      const v = await probeUrl(o.url, o.eras, {
        // The upstream's credentials too, as the start's probe: without them a trial of an upstream that wants them is a 401 (and it never comes back).
        headers: await outboundHeaders(co, undefined),
        clientInfo: { name: o.clientInfo.name, version: o.clientInfo.version },
        timeoutMs: o.limits.upstreamProbeTimeoutMs,
        tries: 1,
        // A liveness trial: the era was found at start, and a dual-era check would open a session for nothing.
        dualEra: false,
        limits: o.limits,
        dispatcher: agent,
        credentialsHint: CREDENTIALS_HINT,
      });
      if (!v.ok) throw unfound(v);
    },
    async close() {
      await Promise.all([c.stateless, c.sessions, c.httpSse].map((x) => x?.close() ?? Promise.resolve()));
      // What the connectors sent on their way out (session DELETEs) may finish, for at most one
      // stop step; then the Agent's sockets are cut, whatever is still waiting on them.
      let cut: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (cut = setTimeout(resolve, o.limits.upstreamStopTimeoutMs)));
      await Promise.race([agent.close().catch(() => {}), late]);
      clearTimeout(cut);
      await Promise.all([...pools].map((p) => p.destroy().catch(() => {})));
    },
  };
}
