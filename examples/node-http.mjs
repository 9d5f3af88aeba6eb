// A plain node:http server serving Switchyard through its Node (req, res) handler.
//
//   PORT=3000 node examples/node-http.mjs

import http from 'node:http';
import { createSwitchyard } from 'switchyard';

// The host listens on loopback, so only loopback names may appear in Host: a page that rebinds its
// own name to 127.0.0.1 sends that name (DNS rebinding). An embedder's listener is its own, so
// Switchyard checks Host only against this list (docs/embedding.md).
const switchyard = createSwitchyard({ allowedHosts: ['localhost', '127.0.0.1', '[::1]'] });
const served = new Set(switchyard.paths);

// The connection bounds are the host's own (docs/embedding.md): here the standalone listener's
// defaults, checked every second, so that a client sending its head or body slowly is cut off.
const bounds = { headersTimeout: 10_000, requestTimeout: 20_000, connectionsCheckingInterval: 1_000 };

const server = http.createServer(bounds, (req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return;
  }
  if (served.has(path)) {
    void switchyard.handle(req, res);
    return;
  }
  res.writeHead(404).end();
});
server.maxConnections = 1024;

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`switchyard example listening on http://127.0.0.1:${server.address().port}/mcp`);
});

for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    switchyard.close().then(
      () => server.close(() => process.exit(0)),
      () => process.exit(1),
    );
  });
