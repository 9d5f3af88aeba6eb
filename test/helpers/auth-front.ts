// Test helper: a protected resource on 127.0.0.1 port 0 built only from src/auth, the way the gateway's front door will use it:
// PRM at its well-known path, every request to the mount authenticated first, refusals answered with the error's status and headers.

import http from 'node:http';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { SwitchyardError, toRpcError } from '../../src/core/errors.js';
import type { Identity } from '../../src/core/identity.js';
import { createAuthenticator, type HeaderSource } from '../../src/auth/authenticate.js';
import type { AuthConfig } from '../../src/auth/config.js';
import { prmDocument, prmPath } from '../../src/auth/prm.js';

/** A running protected resource. */
export interface AuthFront {
  /** The mount's canonical resource URI, e.g. `http://127.0.0.1:41234/mcp`. */
  resource: string;
  /** Its protected resource metadata URL. */
  prmUrl: string;
  /** Log records the authenticator wrote (JSON lines, parsed). */
  records: Array<Record<string, unknown>>;
  /**
   * What authenticated requests reached the inner handler, in order; the inner handler answers
   * `{ identity }` unless `inner` is given.
   */
  seen: Identity[];
}

/** Options of {@link startAuthFront}. */
export interface AuthFrontOptions {
  /** The mount path (default `/mcp`). */
  path?: string;
  /** Authorization servers listed in the PRM document (default: `auth.bearer.issuer`, if any). */
  authorizationServers?: string[];
  /** Handles an authenticated request instead of answering the identity. */
  inner?: (req: http.IncomingMessage, res: http.ServerResponse, identity: Identity | null, body: Buffer) => void;
}

/**
 * The request's headers as a {@link HeaderSource}: repeated fields joined with `, ` from
 * `rawHeaders`, because Node keeps only the first `Authorization` in `req.headers`.
 */
export function headerSource(req: http.IncomingMessage): HeaderSource {
  return {
    get(name) {
      const values: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === name) values.push(req.rawHeaders[i + 1]);
      return values.length === 0 ? undefined : values.join(', ');
    },
  };
}

/** Starts the protected resource and registers its teardown with `t.after`. */
export async function startAuthFront(t: { after(fn: () => Promise<void>): void }, auth: AuthConfig, opts: AuthFrontOptions = {}): Promise<AuthFront> {
  const records: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) records.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const authenticator = createAuthenticator(auth, { log: pino({ level: 'debug' }, sink) });
  const mount = opts.path ?? '/mcp';
  const seen: Identity[] = [];
  // Above Node's 16 KiB default, so that the authenticator's own token bound is what refuses an overlong token.
  const server = http.createServer({ maxHeaderSize: 65_536 }, (req, res) => {
    const url = new URL(req.url ?? '/', front.resource);
    if (req.method === 'GET' && url.pathname === prmPath(mount)) {
      const doc = prmDocument({
        resource: front.resource,
        authorizationServers: opts.authorizationServers ?? (auth.bearer ? [auth.bearer.issuer] : []),
        scopesSupported: auth.bearer?.scopes,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
      return;
    }
    if (url.pathname !== mount) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      authenticator.authenticate(headerSource(req), { uri: front.resource, prmUrl: front.prmUrl }).then(
        (identity) => {
          if (identity) seen.push(identity);
          if (opts.inner) opts.inner(req, res, identity, Buffer.concat(chunks));
          else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ identity }));
        },
        (err: unknown) => {
          const status = err instanceof SwitchyardError ? err.status : 500;
          const headers = err instanceof SwitchyardError ? (err.headers ?? {}) : {};
          res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: toRpcError(err) }));
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const front: AuthFront = { resource: `${origin}${mount}`, prmUrl: `${origin}${prmPath(mount)}`, records, seen };
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return front;
}
