// The stdio upstream: an existing MCP server run as a child process, shared by every client,
// with request ids re-mapped so that clients never collide and replies reach only their sender.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { CoreLog } from '../core/exchange.js';
import { PeerRpcError, SwitchyardError } from '../core/errors.js';
import type { Limits } from '../core/limits.js';
import { parseBody, serialize, type JsonObject, type RequestId } from '../core/message.js';
import type { Implementation, RequestContext } from '../core/request.js';
import { INPUT_METHODS } from '../core/router.js';
import { CallQueue, driveCall, HeldCalls, resumeCall, type DriveTarget } from '../core/calls.js';
import { honouredFilter, NotificationHub, ResourceInterest, type ServerDescription, type Subscription, type Upstream } from '../core/upstream.js';
import { MODERN_REVISION, STREAMABLE_REVISIONS } from '../core/versions.js';

/** Longest line accepted from a child, bytes; a longer one is a protocol error. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** How long the era probe (`server/discover`) waits at most before assuming a legacy server, ms. */
const DISCOVER_TIMEOUT_MS = 5_000;
/** Invalid stdout lines logged one by one before only every 1,000th is. */
const INVALID_LINES_LOGGED = 10;
/** How long a request waits for a restarting child before failing, ms. */
const READY_WAIT_MS = 10_000;
/** Restart backoff: first delay and cap, ms. */
const BACKOFF_MIN_MS = 200;
const BACKOFF_MAX_MS = 10_000;
/** Uptime after which the backoff resets, ms. */
const STABLE_AFTER_MS = 30_000;
/**
 * Capabilities the gateway declares to a legacy child, so it offers its input-needing tools.
 * Not `roots`: servers ask for roots unprompted (server-everything does after initialize), and
 * such a request names no client call to route it to (docs/dialects.md, stdio upstream).
 */
const GATEWAY_CLIENT_CAPS = { elicitation: {}, sampling: {} };

/** A stdio upstream; `pid` is the running child's process id (undefined while restarting). */
export interface StdioUpstream extends Upstream {
  readonly pid: number | undefined;
}

/** Maps a child's progress notification to the client's (the dialect adds the client's token). */
function progressOf(p: JsonObject): JsonObject {
  const out: JsonObject = { progress: p.progress };
  if (p.total !== undefined) out.total = p.total;
  if (p.message !== undefined) out.message = p.message;
  return out;
}

/** Options of a stdio upstream. */
export interface StdioOptions {
  /** The command line, split like a shell would (quotes, backslashes); not run through a shell. */
  command: string;
  log: CoreLog;
  limits: Limits;
  /** The gateway's own Implementation, sent when a client has none. */
  clientInfo: Implementation;
  /** Extra environment for the child. */
  env?: Record<string, string>;
  /** argv to run instead of splitting `command` (config files give program and args apart). */
  argv?: string[];
  /** Working directory of the child. */
  cwd?: string;
  /** Name in logs (default `stdio:<program>`). */
  name?: string;
  /** Holds calls waiting for a 2026 client's input (server requests from a legacy child). */
  held?: HeldCalls;
}

/**
 * Splits a command line into argv: whitespace separates words; single quotes keep text
 * literally; double quotes keep whitespace and allow `\"`; a backslash escapes one character.
 * @throws SwitchyardError SWY_ERR_CLI_USAGE on an unterminated quote or an empty command
 */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
    }
  }
  if (quote) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'unterminated quote in --stdio command' });
  if (has || cur) out.push(cur);
  if (out.length === 0) throw new SwitchyardError('SWY_ERR_CLI_USAGE', { detail: 'empty --stdio command' });
  return out;
}

interface Pending {
  resolve: (r: JsonObject) => void;
  reject: (e: unknown) => void;
  ctx: RequestContext | undefined;
  method: string;
}

/**
 * Creates a stdio upstream. `start()` spawns the child and finds its era (2026-07-28
 * `server/discover` first; any other answer or a timeout means an initialize-era server).
 * A dead child is restarted with backoff; its in-flight requests fail with
 * SWY_ERR_UPSTREAM_UNAVAILABLE.
 * @see 2025-11-25 basic/transports#stdio (newline-delimited JSON-RPC, stderr is logging);
 *   spec digest README "Era detection" (stdio client)
 */
export function createStdioUpstream(opts: StdioOptions): StdioUpstream {
  const argv = opts.argv ?? splitCommand(opts.command);
  const { log, limits } = opts;
  // A child may be slow to start (e.g. under npx); both handshake steps share the start bound.
  const INITIALIZE_TIMEOUT_MS = limits.upstreamStartTimeoutMs;
  const discoverTimeoutMs = Math.min(DISCOVER_TIMEOUT_MS, Math.ceil(limits.upstreamStartTimeoutMs / 4));
  const hub = new NotificationHub();
  const pending = new Map<number, Pending>();
  /** Client requests in flight, driven event by event (progress, logs, server requests, the answer). */
  const calls = new Map<number, { queue: CallQueue; ctx: RequestContext }>();
  const held = opts.held ?? new HeldCalls(undefined, 1024, limits.clientRequestTimeoutMs);
  const interest = new ResourceInterest(
    (uri) => void call('resources/subscribe', { uri }, undefined, limits.upstreamStartTimeoutMs).catch(() => {}),
    (uri) => void call('resources/unsubscribe', { uri }, undefined, limits.upstreamStartTimeoutMs).catch(() => {}),
  );
  let nextId = 0;
  let child: ChildProcessWithoutNullStreams | undefined;
  let desc: ServerDescription | undefined;
  let modern = false;
  let stopping = false;
  let backoff = BACKOFF_MIN_MS;
  let startedAt = 0;
  let ready: Promise<void> | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let invalidLines = 0;

  const write = (msg: unknown): boolean => {
    if (!child || child.stdin.destroyed) return false;
    child.stdin.write(serialize(msg) + '\n');
    return true;
  };

  const failAll = (err: SwitchyardError) => {
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(err);
    }
    for (const [id, c] of calls) {
      calls.delete(id);
      c.queue.fail(err);
    }
  };

  /** Sends one request to the child; resolves with its result. */
  const call = (method: string, params: JsonObject, ctx: RequestContext | undefined, timeoutMs?: number): Promise<JsonObject> => {
    if (pending.size >= limits.maxInFlightPerUpstream) return Promise.reject(new SwitchyardError('SWY_ERR_UPSTREAM_OVERLOADED'));
    const id = ++nextId;
    return new Promise<JsonObject>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        if (!pending.delete(id)) return;
        clearTimeout(timer);
        // basic/utilities/cancellation: tell the child to stop; ignore its late response.
        write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'cancelled by client' } });
        reject(ctx?.signal.reason ?? new SwitchyardError('SWY_ERR_REQ_CANCELLED'));
      };
      const done = () => {
        clearTimeout(timer);
        ctx?.signal.removeEventListener('abort', onAbort);
      };
      pending.set(id, {
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
        ctx,
        method,
      });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (pending.delete(id)) reject(new SwitchyardError('SWY_ERR_REQ_DEADLINE', { detail: `${method} after ${timeoutMs} ms` }));
        }, timeoutMs);
        timer.unref();
      }
      if (ctx) {
        if (ctx.signal.aborted) return onAbort();
        ctx.signal.addEventListener('abort', onAbort, { once: true });
      }
      if (!write({ jsonrpc: '2.0', id, method, params })) {
        pending.delete(id);
        done();
        reject(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE'));
      }
    });
  };

  /** The single client call a child's unlabelled message can belong to, if unambiguous. */
  const soleCall = (pred: (ctx: RequestContext) => boolean): { queue: CallQueue; ctx: RequestContext } | undefined => {
    let found: { queue: CallQueue; ctx: RequestContext } | undefined;
    for (const c of calls.values()) {
      if (!pred(c.ctx)) continue;
      if (found) return undefined;
      found = c;
    }
    return found;
  };

  const onChildRequest = (msg: { id: RequestId; method: string; params?: JsonObject }) => {
    const reply = (body: { result: JsonObject } | { error: { code: number; message: string; data?: unknown } }) =>
      write({ jsonrpc: '2.0', id: msg.id, ...body });
    if (msg.method === 'ping') return reply({ result: {} });
    // Over stdio a server request names no originating request: route it only when exactly one
    // input-capable call is in flight; the driver asks its client or holds the call.
    const owner = soleCall((ctx) => INPUT_METHODS.has(ctx.method));
    if (!owner) {
      log.warn({ method: msg.method, upstream: 'stdio', inFlight: [...calls.values()].map((c) => c.ctx.method) }, 'upstream message has no client');
      return reply({ error: { code: -32603, message: 'Switchyard cannot route this request to a client' } });
    }
    owner.queue.push({ kind: 'request', id: msg.id, method: msg.method, params: msg.params ?? {} });
  };

  const onNotification = (msg: { method: string; params?: JsonObject }) => {
    const params = msg.params ?? {};
    switch (msg.method) {
      case 'notifications/progress':
        calls.get(Number(params.progressToken))?.queue.push({ kind: 'progress', params });
        return;
      case 'notifications/message': {
        // Log messages carry no request id: deliver only when one call asked for them.
        const c = soleCall((ctx) => ctx.logLevel !== undefined);
        if (c) c.queue.push({ kind: 'log', params });
        else log.debug({ upstream: 'stdio', method: msg.method }, 'upstream message has no client');
        return;
      }
      case 'notifications/tools/list_changed':
      case 'notifications/prompts/list_changed':
      case 'notifications/resources/list_changed':
      case 'notifications/resources/updated': {
        const clean: JsonObject = { ...params };
        delete clean._meta;
        hub.emit({ method: msg.method, params: clean });
        return;
      }
      default:
        log.debug({ upstream: 'stdio', method: msg.method }, 'upstream notification ignored');
    }
  };

  const onLine = (line: string) => {
    if (line.trim() === '') return;
    let msg: JsonObject;
    try {
      msg = parseBody(line, limits).value as JsonObject;
    } catch {
      // Bounded logging: a child that floods stdout with garbage must not flood the log.
      if (++invalidLines <= INVALID_LINES_LOGGED || invalidLines % 1000 === 0) {
        log.error({ upstream: 'stdio', excerpt: line.slice(0, 200), count: invalidLines }, 'upstream sent an invalid message');
      }
      return;
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return;
    if (typeof msg.method === 'string') {
      if ('id' in msg && msg.id !== null) onChildRequest(msg as { id: RequestId; method: string; params?: JsonObject });
      else onNotification(msg as { method: string; params?: JsonObject });
      return;
    }
    const c = calls.get(Number(msg.id));
    if (c) {
      if (msg.error) c.queue.push({ kind: 'error', error: msg.error as { code: number; message: string } });
      else c.queue.push({ kind: 'result', result: (msg.result ?? {}) as JsonObject });
      return;
    }
    const p = pending.get(Number(msg.id));
    if (!p) return; // a late answer to a cancelled or timed-out request
    pending.delete(Number(msg.id));
    if (msg.error) p.reject(new PeerRpcError(msg.error as { code: number; message: string }));
    else p.resolve((msg.result ?? {}) as JsonObject);
  };

  const spawnChild = (): ChildProcessWithoutNullStreams => {
    const c = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...opts.env }, cwd: opts.cwd });
    let buf = '';
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        onLine(line);
      }
      if (buf.length > MAX_LINE_BYTES) {
        log.error({ upstream: 'stdio', bytes: buf.length }, 'upstream sent an invalid message');
        buf = '';
        c.kill('SIGKILL');
      }
    });
    c.stderr.setEncoding('utf8');
    let errBuf = '';
    c.stderr.on('data', (chunk: string) => {
      errBuf += chunk;
      let nl: number;
      while ((nl = errBuf.indexOf('\n')) >= 0) {
        // stderr is logging, not a failure signal (basic/transports#stdio).
        log.debug({ upstream: 'stdio', line: errBuf.slice(0, nl).slice(0, 2000) }, 'upstream stderr');
        errBuf = errBuf.slice(nl + 1);
      }
      if (errBuf.length > 64 * 1024) errBuf = '';
    });
    c.stdin.on('error', () => {});
    c.on('error', (err) => log.error({ err, upstream: 'stdio' }, 'upstream exited'));
    c.on('exit', (code, signal) => {
      if (child !== c) return;
      child = undefined;
      failAll(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `child exited (${signal ?? code})` }));
      if (stopping || !desc) return;
      log.error({ upstream: 'stdio', code, signal }, 'upstream exited');
      if (Date.now() - startedAt > STABLE_AFTER_MS) backoff = BACKOFF_MIN_MS;
      const delay = backoff;
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      log.info({ upstream: 'stdio', delayMs: delay }, 'upstream restarting');
      let resolveReady!: () => void;
      ready = new Promise<void>((r) => (resolveReady = r));
      restartTimer = setTimeout(() => {
        launch().then(resolveReady, (err: unknown) => {
          log.error({ err, upstream: 'stdio' }, 'upstream exited');
          resolveReady();
        });
      }, delay);
      restartTimer.unref();
    });
    return c;
  };

  /** Spawns the child and finds its era. */
  const launch = async (): Promise<void> => {
    child = spawnChild();
    startedAt = Date.now();
    const c = child;
    const exited = new Promise<never>((_, reject) => {
      const fail = () => reject(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'child exited during start' }));
      c.once('exit', fail);
      c.once('error', fail);
    });
    exited.catch(() => {});
    // Era probe (digest "Era detection", stdio): a modern result or modern error means 2026-07-28.
    let discovered: JsonObject | undefined;
    try {
      discovered = await Promise.race([
        call(
          'server/discover',
          {
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': opts.clientInfo,
            },
          },
          undefined,
          discoverTimeoutMs,
        ),
        exited,
      ]);
    } catch (err) {
      if (err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE') throw err;
      discovered = undefined;
    }
    const versions = discovered?.supportedVersions;
    if (discovered && Array.isArray(versions) && versions.includes(MODERN_REVISION)) {
      modern = true;
      const meta = (discovered._meta ?? {}) as JsonObject;
      desc = {
        serverInfo: (meta['io.modelcontextprotocol/serverInfo'] as Implementation) ?? { name: argv[0], version: 'unknown' },
        capabilities: (discovered.capabilities ?? {}) as JsonObject,
        upstreamRevision: MODERN_REVISION,
        ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
      };
    } else {
      modern = false;
      const init = await Promise.race([
        call(
          'initialize',
          { protocolVersion: STREAMABLE_REVISIONS[0], capabilities: GATEWAY_CLIENT_CAPS, clientInfo: opts.clientInfo },
          undefined,
          INITIALIZE_TIMEOUT_MS,
        ),
        exited,
      ]);
      write({ jsonrpc: '2.0', method: 'notifications/initialized' });
      desc = {
        serverInfo: (init.serverInfo as Implementation) ?? { name: argv[0], version: 'unknown' },
        capabilities: (init.capabilities ?? {}) as JsonObject,
        upstreamRevision: String(init.protocolVersion ?? STREAMABLE_REVISIONS[0]),
        ...(typeof init.instructions === 'string' ? { instructions: init.instructions } : {}),
      };
      for (const uri of interest.uris()) void call('resources/subscribe', { uri }, undefined, INITIALIZE_TIMEOUT_MS).catch(() => {});
    }
    if (modern) {
      // One listen on the child for list changes; its notifications feed the hub.
      const filter = honouredFilter({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }, desc.capabilities);
      if (Object.keys(filter).length > 0) {
        write({
          jsonrpc: '2.0',
          id: ++nextId,
          method: 'subscriptions/listen',
          params: {
            notifications: filter,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
              'io.modelcontextprotocol/clientCapabilities': {},
              'io.modelcontextprotocol/clientInfo': opts.clientInfo,
            },
          },
        });
      }
    }
  };

  const upstreamParams = (ctx: RequestContext, id: number): JsonObject => {
    const params: JsonObject = { ...ctx.params };
    const meta: JsonObject = { ...(params._meta as JsonObject | undefined) };
    // The child sees its own progress token: the gateway's request id (unique among in-flight).
    if (ctx.progressToken !== undefined) meta.progressToken = id;
    else delete meta.progressToken;
    if (modern) {
      meta['io.modelcontextprotocol/protocolVersion'] = MODERN_REVISION;
      meta['io.modelcontextprotocol/clientCapabilities'] = ctx.clientCapabilities;
      meta['io.modelcontextprotocol/clientInfo'] = ctx.clientInfo ?? opts.clientInfo;
      if (ctx.logLevel !== undefined) meta['io.modelcontextprotocol/logLevel'] = ctx.logLevel;
    } else {
      delete params.inputResponses;
      delete params.requestState;
    }
    if (Object.keys(meta).length > 0) params._meta = meta;
    else delete params._meta;
    return params;
  };

  const waitReady = async (): Promise<void> => {
    if (child && desc) return;
    if (!ready || stopping) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
    let t: NodeJS.Timeout | undefined;
    await Promise.race([ready, new Promise<void>((r) => (t = setTimeout(r, READY_WAIT_MS)))]);
    clearTimeout(t);
    if (!child || !desc) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'child is restarting' });
  };

  return {
    name: opts.name ?? `stdio:${argv[0]}`,
    get pid() {
      return child?.pid;
    },
    async start() {
      log.info({ upstream: 'stdio', argv }, 'upstream starting');
      ready = launch();
      try {
        await ready;
      } catch (err) {
        // A child that cannot start is not restarted: the gateway fails to start instead.
        stopping = true;
        clearTimeout(restartTimer);
        child?.kill('SIGKILL');
        throw err instanceof SwitchyardError && err.code === 'SWY_ERR_UPSTREAM_UNAVAILABLE'
          ? err
          : new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: `no answer to initialize within ${INITIALIZE_TIMEOUT_MS} ms`, cause: err });
      }
    },
    describe() {
      if (!desc) throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      return desc;
    },
    async request(ctx) {
      if (HeldCalls.isOurs(ctx.params.requestState)) {
        const h = held.take(ctx.params.requestState, ctx.method, ctx.params);
        if (!h) throw new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: 'requestState is unknown, expired, or bound to another request' });
        return resumeCall(h, ctx, held, progressOf);
      }
      await waitReady();
      if (pending.size + calls.size >= limits.maxInFlightPerUpstream) throw new SwitchyardError('SWY_ERR_UPSTREAM_OVERLOADED');
      // The id (and progress token) the child sees is ours: unique among everything in flight.
      const id = ++nextId;
      const queue = new CallQueue();
      calls.set(id, { queue, ctx });
      if (!write({ jsonrpc: '2.0', id, method: ctx.method, params: upstreamParams(ctx, id) })) {
        calls.delete(id);
        throw new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE');
      }
      const target: DriveTarget = {
        queue,
        respond: (rid, answer) => void write({ jsonrpc: '2.0', id: rid, ...answer }),
        finish: () => calls.delete(id),
        cancel: (reason) => {
          // basic/utilities/cancellation: tell the child to stop; ignore its late response.
          if (calls.delete(id)) write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
        },
      };
      try {
        return await driveCall(target, ctx, held, progressOf);
      } catch (err) {
        calls.delete(id);
        throw err;
      }
    },
    subscribe(filter, sink): Subscription {
      const sub = hub.add(filter, sink);
      // A modern child's resource updates come through its listen; a legacy child needs resources/subscribe.
      const drop = interest.add(modern ? [] : (filter.resourceSubscriptions ?? []));
      return {
        close() {
          sub.close();
          drop();
        },
      };
    },
    async close() {
      stopping = true;
      clearTimeout(restartTimer);
      const c = child;
      // A child that never started (spawn failed) or already exited has nothing to stop.
      if (!c || c.pid === undefined || c.exitCode !== null || c.signalCode !== null) {
        child = undefined;
        failAll(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'shutting down' }));
        return;
      }
      // Ordered shutdown: close stdin, then SIGTERM, then SIGKILL (MCP SDK stdio client).
      await new Promise<void>((resolve) => {
        const t1 = setTimeout(() => c.kill('SIGTERM'), 2_000);
        const t2 = setTimeout(() => c.kill('SIGKILL'), 5_000);
        // Bounded: a child that ignores even SIGKILL's aftermath does not hold shutdown.
        const t3 = setTimeout(() => done(), 6_000);
        const done = () => {
          clearTimeout(t1);
          clearTimeout(t2);
          clearTimeout(t3);
          resolve();
        };
        c.once('exit', done);
        c.stdin.end();
      });
      child = undefined;
      failAll(new SwitchyardError('SWY_ERR_UPSTREAM_UNAVAILABLE', { detail: 'shutting down' }));
    },
  };
}
