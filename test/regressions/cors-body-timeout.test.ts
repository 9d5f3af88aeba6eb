// CORS on an answer written outside the routes (docs/security.md, "CORS"): a POST from a page on
// a listed origin whose body does not arrive within the listener's request bound is refused 408
// by a hand-written answer on the socket (node:http's request timeout, `clientErrorHandler`), and
// that answer carried none of the fields the route's first hook had set for the request, so the
// page could not read it ("Failed to fetch"). It now carries them: the listed origin's fields and
// `Vary`; an origin not listed only `Vary`; a head that never arrived whole none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { gatewayFromConfig } from '../helpers/identity.js';

const PAGE = 'http://localhost:5173';
/** Allowed by the default allowedOrigins (localhost), not listed in cors.origins. */
const UNLISTED = 'http://localhost:4000';
const EXPOSE = 'Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After, Allow, Accept-Encoding';

/** Writes `text` to 127.0.0.1:`port` and reads until the server closes: the status and the header fields (lower-case names). */
function answerTo(port: number, text: string): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error('no close within 10 s'));
    }, 10_000);
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      const [statusLine, ...lines] = Buffer.concat(chunks).toString('latin1').split('\r\n\r\n')[0].split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers });
    });
    s.write(text);
  });
}

/** The `access-control-*` and `vary` fields. */
const corsOf = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).filter(([k]) => k.startsWith('access-control-') || k === 'vary'));

test('a body that times out is refused 408 with the CORS fields of a listed origin; an unlisted one gets Vary only, a head that never ends none', async (t) => {
  const gw = await gatewayFromConfig(t, {
    cors: { origins: [PAGE] },
    limits: { headTimeoutMs: 300, bodyTimeoutMs: 300 },
    upstreams: { a: { transport: 'embedded' } },
  });
  const port = Number(new URL(gw.urls[0]).port);
  const slowBody = (origin: string) =>
    `POST /a/mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${origin}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`;

  const listed = await answerTo(port, slowBody(PAGE));
  assert.equal(listed.status, 408);
  assert.equal(listed.headers['content-type'], 'application/json');
  assert.deepEqual(corsOf(listed.headers), { vary: 'Origin', 'access-control-allow-origin': PAGE, 'access-control-expose-headers': EXPOSE });

  const unlisted = await answerTo(port, slowBody(UNLISTED));
  assert.equal(unlisted.status, 408);
  assert.deepEqual(corsOf(unlisted.headers), { vary: 'Origin' });

  const head = await answerTo(port, `POST /a/mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${PAGE}\r\n`);
  assert.equal(head.status, 408);
  assert.deepEqual(corsOf(head.headers), {});
});
