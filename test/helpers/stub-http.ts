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
