// The ceiling: a bare fastify server (the same fastify Switchyard uses) answering every POST
// with a fixed JSON body. Usage: node ceiling.mjs PORT
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  result: { content: [{ type: 'text', text: 'x'.repeat(100) }], resultType: 'complete' },
});
const app = Fastify({ logger: false });
app.post('/*', async (_req, reply) => {
  reply.header('content-type', 'application/json');
  return BODY;
});
await app.listen({ host: '127.0.0.1', port });
process.stderr.write(`ceiling listening on http://127.0.0.1:${port}/\n`);
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => app.close().then(() => process.exit(0)));
