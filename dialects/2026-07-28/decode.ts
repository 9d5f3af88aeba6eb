// 2026-07-28 request validation: the mirrored headers and the protocol `_meta`, in the
// rejection order of stateless-2026-07-28 §4.2.

import type { IncomingHttpHeaders } from 'node:http';
import { SwitchyardError } from '../../src/core/errors.js';
import type { JsonObject, RpcRequest } from '../../src/core/message.js';
import type { Implementation } from '../../src/core/request.js';
import { readModernMeta, stripModernMeta } from '../../src/core/modern-meta.js';
import type { ParamHeader } from '../../src/core/router.js';
import { decodeHeaderValue, HEADER_VALUE_RAW_INVALID } from '../../src/core/headers.js';
import { META, NAME_PARAM } from './methods.js';

export { decodeHeaderValue, encodeHeaderValue } from '../../src/core/headers.js';

const RAW_INVALID = HEADER_VALUE_RAW_INVALID;

/** Why a raw header value is invalid, or null (stateless-2026-07-28 §4.1 value encoding). */
function invalidValue(name: string, raw: string): SwitchyardError | null {
  if (RAW_INVALID.test(raw.trim())) return mismatch(`${name} has invalid characters`);
  if (decodeHeaderValue(raw) === null) return mismatch(`${name} has invalid Base64`);
  return null;
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** What validation extracts from a valid request. */
export interface ModernRequestInfo {
  protocolVersion: string;
  clientCapabilities: JsonObject;
  clientInfo: Implementation | undefined;
  logLevel: string | undefined;
  /** params with the protocol `_meta` keys removed. */
  params: JsonObject;
}

function mismatch(detail: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_MODERN_HEADER_MISMATCH', { detail });
}

/**
 * Checks `_meta` and the standard headers of one request, in §4.2 order: malformed `_meta`
 * (-32602), header/body disagreement (-32020), unsupported version (-32022 with
 * `data.supported`/`data.requested`), missing standard headers (-32020). All are HTTP 400.
 * @see 2026-07-28 basic#meta; basic/versioning; basic/transports/streamable-http §Server validation
 * @throws SwitchyardError SWY_ERR_MODERN_META, SWY_ERR_MODERN_HEADER_MISMATCH, SWY_ERR_MODERN_VERSION
 */
export function validateModernRequest(headers: IncomingHttpHeaders, msg: RpcRequest, supported: readonly string[]): ModernRequestInfo {
  const params = (msg.params ?? {}) as JsonObject;
  const meta = params._meta as JsonObject | undefined;
  const hVersion = header(headers, 'mcp-protocol-version');
  const hMethod = header(headers, 'mcp-method');
  // 4. _meta present but malformed, or modern headers without (complete) _meta: -32602.
  if (!meta || typeof meta !== 'object' || Array.isArray(meta) || !(META.protocolVersion in meta)) {
    if (hVersion !== undefined || hMethod !== undefined)
      throw new SwitchyardError('SWY_ERR_MODERN_META', { detail: `_meta["${META.protocolVersion}"] is required` });
    // Neither headers nor _meta (digest §11.1): answer -32022 with the versions we serve. The
    // version asked for is initialize's, else the one a header-less request implies (2025-03-26,
    // 2025-06-18 basic/transports#protocol-version-header).
    const requested = msg.method === 'initialize' && typeof params.protocolVersion === 'string' ? params.protocolVersion : '2025-03-26';
    throw new SwitchyardError('SWY_ERR_MODERN_VERSION', { detail: requested, data: { supported: [...supported], requested } });
  }
  const { protocolVersion: version, clientCapabilities, clientInfo, logLevel } = readModernMeta(meta);
  // 5. Header disagrees with the body: -32020.
  if (hVersion !== undefined && hVersion.trim() !== version) throw mismatch('MCP-Protocol-Version differs from _meta protocolVersion');
  if (hMethod !== undefined && hMethod.trim() !== msg.method) throw mismatch('Mcp-Method differs from method');
  // 6. Unsupported version: -32022.
  if (!supported.includes(version))
    throw new SwitchyardError('SWY_ERR_MODERN_VERSION', { detail: version, data: { supported: [...supported], requested: version } });
  // 7. Missing standard headers, or a bad Mcp-Name: -32020.
  if (hVersion === undefined) throw mismatch('MCP-Protocol-Version header is required');
  if (hMethod === undefined) throw mismatch('Mcp-Method header is required');
  const nameParam = NAME_PARAM[msg.method];
  if (nameParam) {
    const raw = header(headers, 'mcp-name');
    if (raw === undefined) throw mismatch('Mcp-Name header is required');
    const bad = invalidValue('Mcp-Name', raw);
    if (bad) throw bad;
    const decoded = decodeHeaderValue(raw);
    if (decoded !== params[nameParam]) throw mismatch(`Mcp-Name differs from params.${nameParam}`);
  }
  return {
    protocolVersion: version,
    clientCapabilities,
    clientInfo,
    logLevel,
    params: stripModernMeta(params),
  };
}

/**
 * Checks `Mcp-Param-*` headers of a tools/call against the tool's `x-mcp-header` annotations:
 * every annotated argument present in the body needs its header, equal after decoding
 * (integers compared numerically, booleans as `true`/`false`).
 * @see 2026-07-28 server/tools#x-mcp-header; basic/transports/streamable-http §Server validation
 * @throws SwitchyardError SWY_ERR_MODERN_HEADER_MISMATCH
 */
export function validateParamHeaders(headers: IncomingHttpHeaders, args: JsonObject | undefined, annotations: readonly ParamHeader[]): void {
  for (const a of annotations) {
    const value = args?.[a.property];
    const raw = header(headers, `mcp-param-${a.header.toLowerCase()}`);
    if (value === undefined || value === null) continue;
    if (raw === undefined) throw mismatch(`Mcp-Param-${a.header} header is required`);
    const bad = invalidValue(`Mcp-Param-${a.header}`, raw);
    if (bad) throw bad;
    const decoded = decodeHeaderValue(raw) as string;
    let same: boolean;
    if (a.type === 'integer') same = decoded.trim() !== '' && Number(decoded) === value;
    else if (a.type === 'boolean') same = decoded === String(value);
    else same = decoded === value;
    if (!same) throw mismatch(`Mcp-Param-${a.header} differs from arguments.${a.property}`);
  }
}
