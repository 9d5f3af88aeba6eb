// Outbound HTTP for authentication (metadata, JWKS, introspection, token endpoints): every call has a timeout, a body bound and no redirects.

import { SwitchyardError, type ErrorCode } from '../core/errors.js';

/** Largest response body read from an authorization server, bytes. */
export const MAX_RESPONSE_BYTES = 1_048_576;

/** Default timeout of one outbound call (connect, headers and body), ms. */
export const DEFAULT_TIMEOUT_MS = 5_000;

/** A finished outbound exchange with its whole (bounded) body. */
export interface BoundedResponse {
  status: number;
  headers: Headers;
  /** The body as UTF-8 text. */
  text: string;
}

/** How one outbound call is made. */
export interface BoundedRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A form body (`application/x-www-form-urlencoded`, RFC 6749 §4.1.3). */
  form?: URLSearchParams;
  /** Whole-exchange timeout, ms. */
  timeoutMs: number;
  /** The catalogue code thrown when the call fails. */
  code: ErrorCode;
  /** What is being fetched, for the error detail (`JWKS`, `introspection`, …). */
  what: string;
  /**
   * Where, for the operator only (a URL as `urlForDisplay` shows it): put after `what` in the
   * error's `operatorDetail`, never in its message, which a client may read (an upstream's token
   * issuer is the operator's topology, docs/security.md, threat model).
   */
  at?: string;
}

/**
 * Makes one HTTP request with global fetch (undici): `AbortSignal.timeout(timeoutMs)` bounds
 * the whole exchange, the body is read up to {@link MAX_RESPONSE_BYTES}, and a redirect is not
 * followed (it is answered as is, so callers see a 3xx status).
 * @throws SwitchyardError `code` on a network error, a timeout, or a body over the bound.
 */
export async function fetchBounded(url: string | URL, req: BoundedRequest): Promise<BoundedResponse> {
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (req.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const signal = AbortSignal.timeout(req.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { method: req.method ?? 'GET', headers, body: req.form?.toString(), redirect: 'manual', signal });
  } catch (cause) {
    throw failure(req, signal.aborted ? `timed out after ${req.timeoutMs} ms` : 'connection failed', cause);
  }
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
    await res.body?.cancel().catch(() => undefined);
    throw failure(req, `answer larger than ${MAX_RESPONSE_BYTES} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    if (res.body) {
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > MAX_RESPONSE_BYTES) {
          await reader.cancel().catch(() => undefined);
          throw failure(req, `answer larger than ${MAX_RESPONSE_BYTES} bytes`);
        }
        chunks.push(value);
      }
    }
  } catch (cause) {
    if (cause instanceof SwitchyardError) throw cause;
    throw failure(req, signal.aborted ? `timed out after ${req.timeoutMs} ms` : 'connection failed while reading', cause);
  }
  return { status: res.status, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
}

function failure(req: BoundedRequest, why: string, cause?: unknown): SwitchyardError {
  return new SwitchyardError(req.code, {
    detail: `${req.what}: ${why}`,
    ...(req.at !== undefined ? { operatorDetail: `${req.what} ${req.at}: ${why}` } : {}),
    cause,
  });
}

/** Parses a JSON object body; null when the body is not a JSON object. */
export function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The `Authorization` value of HTTP Basic client authentication: client id and secret each
 * form-urlencoded, joined by `:`, base64.
 * @see RFC 6749 §2.3.1
 */
export function basicAuth(clientId: string, clientSecret: string): string {
  const enc = (s: string) => new URLSearchParams({ v: s }).toString().slice(2);
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`).toString('base64')}`;
}
