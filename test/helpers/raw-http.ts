// Test helper: HTTP/1.x requests written byte for byte on a TCP socket, for what an HTTP client
// will not send (two Host lines, no Host, an absolute-form target), and the answer read back.

import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';

/** One answer as read off the socket. */
export interface RawAnswer {
  /** The status line's code, 0 when the server closed without answering. */
  status: number;
  /** Header fields by lower-case name (the last line of a repeated name wins). */
  headers: Record<string, string>;
  /** The body, de-chunked. */
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: unknown;
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    if (nl < 0) return out;
    const size = parseInt(rest.slice(0, nl), 16);
    if (!Number.isFinite(size) || size === 0) return out;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
}

/**
 * Writes `head` (request line and header lines, without the blank line; `Connection: close` is
 * added) and `body` to 127.0.0.1:`port` (from `localAddress`, default the kernel's choice), and
 * reads until the server closes (10 s at most).
 */
export function rawRequest(port: number, head: string, body = '', localAddress?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port, ...(localAddress ? { localAddress } : {}) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no close within 10 s: ${Buffer.concat(chunks).toString('latin1').slice(0, 300)}`));
    }, 10_000);
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return resolve({ status: 0, headers: {}, body: text, json: undefined });
      const [statusLine, ...fields] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const f of fields) {
        const c = f.indexOf(':');
        headers[f.slice(0, c).trim().toLowerCase()] = f.slice(c + 1).trim();
      }
      let payload = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') payload = dechunk(payload);
      let json: unknown;
      try {
        json = payload ? JSON.parse(payload) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: payload, json });
    });
    const length = body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    s.write(`${head}\r\n${length}Connection: close\r\n\r\n${body}`);
  });
}

/** Opens `n` TCP connections to 127.0.0.1:`port` from `localAddress` that send nothing; destroyed in teardown. */
export async function idleConnections(t: { after(fn: () => void): void }, port: number, n: number, localAddress = '127.0.0.1'): Promise<net.Socket[]> {
  const out: net.Socket[] = [];
  t.after(() => out.forEach((s) => s.destroy()));
  await Promise.all(
    Array.from({ length: n }, async () => {
      const s = net.connect({ host: '127.0.0.1', port, localAddress });
      s.on('error', () => {});
      out.push(s);
      await once(s, 'connect');
    }),
  );
  return out;
}

/**
 * One GET of `path` on 127.0.0.1:`port` from the source address `localAddress` (any 127.0.0.0/8
 * address on Linux loopback), on a connection of its own; resolves with the status and body, or
 * with the error's code (ECONNRESET for a connection closed at accept).
 */
export function getFrom(port: number, path: string, localAddress: string): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const r = http.get({ host: '127.0.0.1', port, localAddress, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    });
    r.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
  });
}
