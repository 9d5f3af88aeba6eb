// A fastify application that authenticates its own users and mounts Switchyard as a plugin: its
// auth hook verifies a bearer token itself and hands Switchyard only the verified identity.
//
//   EXAMPLE_TOKEN=s3cret PORT=3000 node examples/fastify.mjs
//   curl -H 'Authorization: Bearer s3cret' ... http://127.0.0.1:3000/mcp

import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import Fastify from 'fastify';
import { createSwitchyard, hostIdentity } from 'switchyard';

// The host's own user store: one token, one user. A real application checks a session cookie, a
// JWT, an API key table... Switchyard only ever sees the result.
const TOKEN = Buffer.from(process.env.EXAMPLE_TOKEN ?? 'change-me');
const USER = 'alice';

function userOf(authorization) {
  const m = /^Bearer (\S+)$/.exec(authorization ?? '');
  if (!m) return null;
  const given = Buffer.from(m[1]);
  return given.length === TOKEN.length && timingSafeEqual(given, TOKEN) ? USER : null;
}

// The connection bounds are the host's own (docs/embedding.md): here the standalone listener's
// defaults, checked every second, so that a client sending its head or body slowly is cut off.
// (Fastify's own requestTimeout is 0, none, by default.)
const bounds = { headersTimeout: 10_000, requestTimeout: 20_000, connectionsCheckingInterval: 1_000 };
const app = Fastify({ logger: { level: 'info' }, serverFactory: (handler) => http.createServer(bounds, handler) });
// Switchyard logs through the host's pino logger.
const switchyard = createSwitchyard({ logLevel: 'info' }, { log: app.log });

app.decorateRequest('user', null);

// The host's authentication, on every route (MCP included): 401 from the host itself.
app.addHook('onRequest', async (request, reply) => {
  if (request.url === '/health') return;
  const user = userOf(request.headers.authorization);
  if (!user) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'unauthorized' });
  request.user = user;
});

// The host's own access log sees MCP requests like any other.
app.addHook('onResponse', async (request, reply) => {
  request.log.info({ user: request.user, method: request.method, url: request.url, statusCode: reply.statusCode }, 'served');
});

app.get('/health', async () => ({ ok: true }));

await app.register(switchyard.plugin, { identity: (request) => (request.user ? hostIdentity(request.user) : null) });
// Optional: start the upstreams now instead of on the first request.
await switchyard.ready();

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 3000) });
const { port } = app.server.address();
console.log(`switchyard example listening on http://127.0.0.1:${port}/mcp`);

for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    // Closing the app closes Switchyard too (its streams, sessions and upstreams).
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
