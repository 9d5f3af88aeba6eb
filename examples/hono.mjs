// A Hono application serving Switchyard through its web-standard fetch handler.
//
//   PORT=3000 node examples/hono.mjs

import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createSwitchyard } from 'switchyard';

// The host listens on loopback, so only loopback names may appear in Host: a page that rebinds its
// own name to 127.0.0.1 sends that name (DNS rebinding). An embedder's listener is its own, so
// Switchyard checks Host only against this list (docs/embedding.md).
const switchyard = createSwitchyard({ allowedHosts: ['localhost', '127.0.0.1', '[::1]'] });
const app = new Hono();

app.get('/health', (c) => c.json({ ok: true }));
// Every path Switchyard serves (the MCP path, and HTTP+SSE paths when enabled) goes to its
// fetch handler, with the Request as received (body unread).
for (const path of switchyard.paths) app.all(path, (c) => switchyard.fetch(c.req.raw));

// The connection bounds are the host's own (docs/embedding.md): here the standalone listener's
// defaults, checked every second, so that a client sending its head or body slowly is cut off.
const serverOptions = { headersTimeout: 10_000, requestTimeout: 20_000, connectionsCheckingInterval: 1_000 };
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT ?? 3000), serverOptions }, (info) => {
  console.log(`switchyard example listening on http://127.0.0.1:${info.port}/mcp`);
});

for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    switchyard.close().then(
      () => server.close(() => process.exit(0)),
      () => process.exit(1),
    );
  });
