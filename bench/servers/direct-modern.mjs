// The direct 2026-07-28 server: the official v2 SDK (`@modelcontextprotocol/server`, the
// project's devDependency) serving an `echo` tool statelessly, on node:http with no gateway.
// Usage: node direct-modern.mjs PORT
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, fromJsonSchema } from '@modelcontextprotocol/server';

const port = Number(process.argv[2]);
// The schema is built once, not per request (the factory runs once per request).
const inputSchema = fromJsonSchema({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
const factory = () => {
  const server = new McpServer({ name: 'bench-direct', version: '1.0.0' });
  server.registerTool(
    'echo',
    {
      description: 'Returns the message it is given.',
      inputSchema,
    },
    async ({ message }) => ({ content: [{ type: 'text', text: `Echo: ${message}` }] }),
  );
  return server;
};
const handler = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto' });

const http = createServer(async (req, res) => {
  try {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const request = new Request(`http://127.0.0.1:${port}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    const response = await handler.fetch(request);
    const out = {};
    response.headers.forEach((v, k) => (out[k] = v));
    res.writeHead(response.status, out);
    if (!response.body) return res.end();
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch (err) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(String(err));
  }
});
http.keepAliveTimeout = 5000;
http.listen(port, '127.0.0.1', () => process.stderr.write(`direct-modern listening on http://127.0.0.1:${port}/mcp\n`));
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(0));
