// An OTLP/HTTP trace receiver that drops every span: the bench's "tracing on, spans dropped"
// row pays for making and exporting spans, not for a collector. Usage: node otlp-sink.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const http = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
http.listen(port, '127.0.0.1', () => process.stdout.write(`http://127.0.0.1:${port}/v1/traces\n`));
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => process.exit(0));
