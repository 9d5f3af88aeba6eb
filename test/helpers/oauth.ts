// Test helper: tokens for authentication tests: a user's token through the real authorization code flow with PKCE, forged tokens, and raw requests.

import { createHash, randomBytes } from 'node:crypto';
import { importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import { request } from 'undici';
import type { OAuthClientProvider } from '@modelcontextprotocol/client';
import type { AuthServer } from '../fixtures/auth-server.js';

/** A finished exchange with the headers that matter for authentication. */
export interface AuthResponse {
  status: number;
  wwwAuthenticate: string | undefined;
  retryAfter: string | undefined;
  body: unknown;
}

/** Sends `GET url` with the given Authorization header values (each one sent as its own field). */
export async function getWith(url: string, ...authorization: string[]): Promise<AuthResponse> {
  const headers: string[] = [];
  for (const a of authorization) headers.push('authorization', a);
  const res = await request(url, { method: 'GET', headers });
  const text = await res.body.text();
  const h = (n: string) => {
    const v = res.headers[n];
    return Array.isArray(v) ? v.join(', ') : v;
  };
  return {
    status: res.statusCode,
    wwwAuthenticate: h('www-authenticate'),
    retryAfter: h('retry-after'),
    body: text ? (JSON.parse(text) as unknown) : undefined,
  };
}

/**
 * A user's access token through the authorization code flow with PKCE (RFC 7636, S256) and
 * RFC 8707 `resource`, as the public client: authorize (login and consent are automatic), then
 * redeem the code.
 */
export async function userToken(as: AuthServer, resource: string, scope: string): Promise<string> {
  const redirectUri = 'http://127.0.0.1:3999/callback';
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: as.publicClient.clientId,
    redirect_uri: redirectUri,
    scope,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    resource,
  });
  const back = await as.followAuthorization(`${String(as.issuer)}/auth?${q.toString()}`);
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code in ${back.href}`);
  const res = await request(`${as.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: as.publicClient.clientId,
      code_verifier: verifier,
      resource,
    }).toString(),
  });
  const body = (await res.body.json()) as { access_token?: string };
  if (res.statusCode !== 200 || !body.access_token) throw new Error(`token endpoint answered ${res.statusCode}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Signs `payload` with a private JWK (RS256, its `kid` in the header, `typ: at+jwt`), as an attacker holding the key could. */
export async function forge(jwk: JWK, payload: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  const key = await importJWK(jwk, 'RS256');
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt', ...header }).sign(key);
}

/** An unsigned JWT (`alg: none`, empty signature, RFC 7519 §6). */
export function unsigned(payload: JWTPayload, kid?: string): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${b64({ alg: 'none', typ: 'at+jwt', ...(kid ? { kid } : {}) })}.${b64(payload)}.`;
}

/** An OAuth client provider for the pre-registered public client; the "browser" is the fixture's redirect follower. */
export class PublicClient implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private saved: { tokens?: unknown; verifier?: string; discovery?: unknown } = {};
  constructor(private readonly as: AuthServer) {}
  get redirectUrl() {
    return 'http://127.0.0.1:3999/callback';
  }
  get clientMetadata() {
    return {
      client_name: 'e2e',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return { client_id: this.as.publicClient.clientId };
  }
  tokens() {
    return this.saved.tokens as ReturnType<OAuthClientProvider['tokens']>;
  }
  saveTokens(tokens: unknown) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.saved.verifier = v;
  }
  codeVerifier() {
    return this.saved.verifier!;
  }
  saveDiscoveryState(state: unknown) {
    this.saved.discovery = state;
  }
  discoveryState() {
    return this.saved.discovery as ReturnType<NonNullable<OAuthClientProvider['discoveryState']>>;
  }
}
