// A hand-made HTTP server for tests of how Switchyard meets a misbehaving peer (the probe's
// fallback steps, timeouts, odd answers): on 127.0.0.1 port 0, each request handed over once its
// body has been read whole, and closed with its connections when the test ends.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON-RPC message's parts the stubs look at. */
export type StubMessage = { id?: unknown; method?: string };

/**
 * Starts a stub server. `handle` gets each request after its body was read, with the body parsed
 * as JSON (undefined when empty; a body that is not JSON throws in the server, so stubs are given
 * only what the probe sends). Returns the URL of its `/mcp` and the requests seen so far, each
 * `METHOD path[ jsonrpc-method]`.
 */
export async function stubHttp(
  t: { after(fn: () => Promise<void>): void },
  handle: (req: http.IncomingMessage, res: http.ServerResponse, message: StubMessage | undefined, n: number) => void,
): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const m = text ? (JSON.parse(text) as StubMessage) : undefined;
      seen.push(`${req.method} ${req.url}${m?.method ? ` ${m.method}` : ''}`);
      handle(req, res, m, seen.length);
    });
  });
  return { url: `${await listenForTest(t, server)}/mcp`, seen };
}

/**
 * A 2026-07-28 Streamable HTTP upstream (stateless) with one tool, `tool`: it answers
 * `server/discover` (server `name`, the tools capability) and `tools/list` in JSON, `tools/call`
 * as `call` writes it (status, type and body of its own: what the test is about), anything else
 * -32601. Resolves with the URL of its `/mcp`.
 * @see 2026-07-28 basic/transports#streamable-http
 */
export async function modernToolStub(
  t: { after(fn: () => Promise<void>): void },
  name: string,
  tool: string,
  call: (id: unknown, res: http.ServerResponse) => void,
): Promise<string> {
  const { url } = await stubHttp(t, (_req, res, m) => {
    const reply = (body: Record<string, unknown>) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m?.id, ...body }));
    if (m?.method === 'server/discover')
      return reply({
        result: { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, _meta: { 'io.modelcontextprotocol/serverInfo': { name, version: '1' } } },
      });
    if (m?.method === 'tools/list') return reply({ result: { tools: [{ name: tool, inputSchema: { type: 'object' } }] } });
    if (m?.method === 'tools/call') return call(m.id, res);
    reply({ error: { code: -32601, message: 'Method not found' } });
  });
  return url;
}

/**
 * A 2025-06-18 Streamable HTTP upstream with one session (`Mcp-Session-Id: s1`) and one tool,
 * `tool`: it answers `initialize` (`capabilities`, default the tools capability; server `name`)
 * and `tools/list` in JSON (`tools()` when given, else `tool` alone), a notification 202,
 * `tools/call` as `call` writes it (status, type and body of its own: what the test is about;
 * or, when `call` returns a plain object, that object as the result, in JSON),
 * anything else -32601. `before`, when given, sees each request first (a GET, a DELETE, an
 * answer to a server request) and returns true when it answered it. Resolves with its `/mcp` URL.
 * @see 2025-06-18 basic/transports (Streamable HTTP: sessions, JSON or SSE answers)
 */
export async function sessionStub(
  t: { after(fn: () => Promise<void>): void },
  o: {
    name: string;
    tool: string;
    call: (id: unknown, res: http.ServerResponse, m: StubMessage & { params?: unknown }) => unknown;
    capabilities?: Record<string, unknown>;
    tools?: () => unknown[];
    before?: (req: http.IncomingMessage, res: http.ServerResponse, m: StubMessage | undefined) => boolean;
  },
): Promise<string> {
  const { url } = await stubHttp(t, (req, res, m) => {
    if (o.before?.(req, res, m)) return;
    if (m?.id === undefined) return void res.writeHead(202).end();
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify(body));
    if (m.method === 'initialize')
      return json({
        jsonrpc: '2.0',
        id: m.id,
        result: { protocolVersion: '2025-06-18', capabilities: o.capabilities ?? { tools: {} }, serverInfo: { name: o.name, version: '1' } },
      });
    if (m.method === 'tools/list')
      return json({ jsonrpc: '2.0', id: m.id, result: { tools: o.tools?.() ?? [{ name: o.tool, inputSchema: { type: 'object' } }] } });
    if (m.method === 'tools/call') {
      const result = o.call(m.id, res, m);
      // A plain object is the result; anything else (`res.end()`'s return included) was written by `call`.
      if (typeof result === 'object' && result !== null && Object.getPrototypeOf(result) === Object.prototype) json({ jsonrpc: '2.0', id: m.id, result });
      return;
    }
    json({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
  });
  return url;
}

/**
 * An HTTP upstream that answers nothing until `release()` (a gateway's start, or a reload that
 * adds it, waits on it meanwhile), then 500 to every request, those held included (the era probe
 * gives up at once). `seen` as for {@link stubHttp}: a request there means the gateway is waiting.
 */
export async function silentHttp(t: { after(fn: () => Promise<void>): void }): Promise<{ url: string; seen: string[]; release(): void }> {
  let released = false;
  const held: http.ServerResponse[] = [];
  const { url, seen } = await stubHttp(t, (_req, res) => (released ? res.writeHead(500).end() : held.push(res)));
  return {
    url,
    seen,
    release() {
      released = true;
      for (const res of held.splice(0)) res.writeHead(500).end();
    },
  };
}

/**
 * An HTTP+SSE (2024-11-05) server for the probe, made with {@link stubHttp}: a POST to `/mcp` is
 * refused 405 (so the probe falls back), a GET opens the stream with the `endpoint` event
 * (`/messages?sessionId=s`), and each POST there is answered 202 with `reply(message)` sent on
 * the stream as a `message` event (nothing when it returns undefined). Unlike
 * {@link httpSseStub}, `initialize` is the caller's to answer, however oddly. With `inPost`, the
 * server breaks the rule: each POST there is answered 200 with `reply(message)` as its JSON body
 * (the stream gets nothing).
 * @see 2024-11-05 basic/transports (HTTP with SSE)
 */
export async function probeSseStub(
  t: { after(fn: () => Promise<void>): void },
  reply: (message: StubMessage | undefined) => object | undefined,
  opts: { inPost?: boolean } = {},
): Promise<{ url: string; seen: string[] }> {
  let stream: http.ServerResponse | undefined;
  return stubHttp(t, (req, res, m) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /messages?sessionId=s\n\n');
      stream = res;
      return;
    }
    if (req.url === '/mcp') return void res.writeHead(405, { allow: 'GET' }).end();
    if (opts.inPost) return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply(m) ?? {}));
    res.writeHead(202).end();
    const out = reply(m);
    if (out !== undefined) stream?.write(`event: message\ndata: ${JSON.stringify(out)}\n\n`);
  });
}

/**
 * Listens with `server` on 127.0.0.1 port 0 and closes it, its connections first, when the test
 * ends. Returns its origin, `http://127.0.0.1:PORT`.
 */
export async function listenForTest(t: { after(fn: () => Promise<void>): void }, server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A proxy on 127.0.0.1 port 0 in front of the server at `to`, for a test that makes one kind of
 * request fail on the way: each request's body is read whole, then `intercept(req, body, res)`
 * answers it itself (returns true) or the request goes on to `to` (its Host rewritten; its path
 * `path` when given, else its own), the answer streamed back as it comes. Closed after the test.
 * Resolves with the proxy's origin.
 */
export async function interceptingProxy(
  t: { after(fn: () => Promise<void>): void },
  to: URL,
  intercept: (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => boolean,
  path?: string,
): Promise<string> {
  return listenForTest(
    t,
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (intercept(req, body, res)) return;
        const up = http.request(
          { host: to.hostname, port: to.port, method: req.method, path: path ?? req.url, headers: { ...req.headers, host: to.host } },
          (ur) => {
            res.writeHead(ur.statusCode ?? 502, ur.headers);
            res.flushHeaders();
            ur.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        up.end(body);
      });
    }),
  );
}

/**
 * An HTTP+SSE (2024-11-05) upstream on 127.0.0.1 port 0: `GET /sse` opens a session's stream
 * with its `endpoint` event (`/messages?sessionId=…`); each POST there is answered 202 and its
 * JSON-RPC message handed to `answer` with a `write` that sends a message on that session's
 * stream as a `message` event (and `raw`, which sends any text as one `message` event's data), and the session's id (`1`, `2`, … in the order
 * of the GETs). `initialize` (answered with `serverInfo` `name`, revision
 * 2024-11-05, a `tools` capability, unless `opts.initialize` answers it) and `notifications/initialized` are answered here, the rest
 * by `answer`. `opts.onStream` is told of each stream as it opens, with a `cut` that ends it from the server's side (a restart, a
 * proxy's timeout: the session is forgotten, its POSTs answered 404). A POST for which `opts.cutOn` returns true has its session's
 * stream cut first, and its own 202 sent 100 ms later, so that the client sees the end of the stream before that answer. While
 * `opts.refuseStreams` returns true, a GET is answered 503 (a server still down), and opens no session.
 * With `opts.postBody`, a POST it gives a string for is answered 200 with that string as an `application/json` body instead of
 * 202 (a server that breaks the rule; the message is still handled as above). Resolves with the URL of its `/sse`; closed when
 * the test ends.
 * @see 2024-11-05 basic/transports (HTTP with SSE)
 */
export async function httpSseStub(
  t: { after(fn: () => Promise<void>): void },
  name: string,
  answer: (m: Record<string, unknown>, write: (msg: Record<string, unknown>) => void, raw: (data: string) => void, session: string) => void,
  opts: {
    initialize?: (m: Record<string, unknown>, write: (msg: Record<string, unknown>) => void, raw: (data: string) => void) => void;
    onStream?: (session: string, cut: () => void) => void;
    cutOn?: (m: Record<string, unknown>, session: string) => boolean;
    refuseStreams?: () => boolean;
    postBody?: (m: Record<string, unknown>) => string | undefined;
  } = {},
): Promise<string> {
  const streams = new Map<string, http.ServerResponse>();
  let sessions = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse' && opts.refuseStreams?.()) return void res.writeHead(503).end();
    if (req.method === 'GET' && url.pathname === '/sse') {
      const id = String(++sessions);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`);
      streams.set(id, res);
      req.on('close', () => streams.delete(id));
      opts.onStream?.(id, () => {
        streams.delete(id);
        res.destroy();
      });
      return;
    }
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const id = url.searchParams.get('sessionId') ?? '';
      const stream = streams.get(id);
      if (req.method !== 'POST' || url.pathname !== '/messages' || !stream) return void res.writeHead(404).end();
      const m = JSON.parse(text) as Record<string, unknown>;
      if (opts.cutOn?.(m, id)) {
        streams.delete(id);
        stream.destroy();
        setTimeout(() => res.writeHead(202).end(), 100);
        return;
      }
      const body = opts.postBody?.(m);
      if (body !== undefined) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else res.writeHead(202).end();
      const raw = (data: string) => void stream.write(`event: message\ndata: ${data}\n\n`);
      const write = (msg: Record<string, unknown>) => raw(JSON.stringify({ jsonrpc: '2.0', ...msg }));
      if (m.method === 'initialize' && opts.initialize) return opts.initialize(m, write, raw);
      if (m.method === 'initialize')
        return write({ id: m.id, result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name, version: '1.0.0' } } });
      if (m.method === 'notifications/initialized') return;
      answer(m, write, raw, id);
    });
  });
  return `${await listenForTest(t, server)}/sse`;
}
