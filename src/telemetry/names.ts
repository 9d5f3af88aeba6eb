// Bounded vocabularies shared by metrics, traces, the status recorder and access logs: which
// method names, revisions and error types may become a label value or span attribute.

import { Catalogue, isDrainRefusal, RpcCode, type ErrorCode, type Fault } from '../core/errors.js';
import { INITIALIZE_REVISIONS, STATELESS_REVISION } from '../core/versions.js';

/** The label value for anything outside a bounded set (OTel uses `_OTHER` for `error.type`). */
export const OTHER = '_other';

/** The `error.type` value for an error no bounded class describes. @see OTel semconv, error.type */
export const ERROR_TYPE_OTHER = '_OTHER';

/**
 * MCP method names that may appear as `mcp.method.name` on metrics: the well-known values of the
 * OTel MCP conventions (including the 2026-07-28 additions) and the tasks methods, which the
 * conventions leave to "record the literal method string".
 * @see telemetry digest §2 (`mcp.method.name` values); OTel semconv model/mcp/registry.yaml
 */
export const MCP_METHOD_NAMES: ReadonlySet<string> = new Set([
  'completion/complete',
  'elicitation/create',
  'initialize',
  'logging/setLevel',
  'notifications/cancelled',
  'notifications/initialized',
  'notifications/message',
  'notifications/progress',
  'notifications/prompts/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/roots/list_changed',
  'notifications/tools/list_changed',
  'ping',
  'prompts/get',
  'prompts/list',
  'resources/list',
  'resources/read',
  'resources/subscribe',
  'resources/templates/list',
  'resources/unsubscribe',
  'roots/list',
  'sampling/createMessage',
  'tools/call',
  'tools/list',
  'server/discover',
  'subscriptions/listen',
  'notifications/subscriptions/acknowledged',
  'notifications/elicitation/complete',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'notifications/tasks/status',
]);

/** `mcp.method.name` as a metric label: a known MCP method, else `_other`. */
export function methodLabel(method: unknown): string {
  return typeof method === 'string' && MCP_METHOD_NAMES.has(method) ? method : OTHER;
}

/** Longest method name recorded literally on spans and access lines, characters. */
export const MAX_LITERAL_METHOD_CHARS = 64;

const METHOD_SHAPE = /^[A-Za-z][A-Za-z0-9_./-]*$/;

/**
 * `mcp.method.name` for spans and access lines: known methods as they are, other well-formed
 * method names literally (the conventions ask for the literal string) up to
 * {@link MAX_LITERAL_METHOD_CHARS}, anything else `_other`.
 * @see telemetry digest §2 ("record the literal method string")
 */
export function methodLiteral(method: unknown): string {
  if (typeof method !== 'string') return OTHER;
  if (MCP_METHOD_NAMES.has(method)) return method;
  return method.length <= MAX_LITERAL_METHOD_CHARS && METHOD_SHAPE.test(method) ? method : OTHER;
}

/** Protocol revisions Switchyard speaks; also the dialect ids. */
export const KNOWN_REVISIONS: ReadonlySet<string> = new Set([STATELESS_REVISION, ...INITIALIZE_REVISIONS]);

/** A revision or dialect id as a label value: a known revision, else `_other`. */
export function revisionLabel(revision: unknown): string {
  return typeof revision === 'string' && KNOWN_REVISIONS.has(revision) ? revision : OTHER;
}

/**
 * `network.transport` of an upstream by its transport: `pipe` for a stdio child, `tcp` for an
 * HTTP upstream, undefined for the others (embedded, aggregate: no network peer).
 * @see telemetry digest §6 (Recording the transport) and §8 (as client toward upstreams)
 */
export function networkTransport(transport: string | undefined): 'pipe' | 'tcp' | undefined {
  return transport === 'stdio' ? 'pipe' : transport === 'http' ? 'tcp' : undefined;
}

/** Stream kinds the front doors publish. @see src/core/diagnostics.ts StreamMessage */
export const STREAM_KINDS: ReadonlySet<string> = new Set(['get', 'listen', 'http-sse', 'request']);

/** True when `code` is a catalogue code. */
export function isCatalogueCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(Catalogue, code);
}

/** A catalogue code as a label value, else `_other`. */
export function codeLabel(code: unknown): string {
  return isCatalogueCode(code) ? code : OTHER;
}

/**
 * JSON-RPC codes recorded as their decimal string: the JSON-RPC 2.0 codes, the MCP codes,
 * -32042 (URL elicitation required, 2025-11-25) and every code a catalogue entry answers with
 * (-32010 policy denial, -32011 rate limit; local errors have none). An upstream may send any integer, so others collapse
 * into one value.
 * @see JSON-RPC 2.0 §5.1; MCP 2026-07-28 basic#error-codes
 */
export const KNOWN_RPC_CODES: ReadonlySet<number> = new Set([
  ...Object.values(RpcCode),
  -32042,
  ...Object.values(Catalogue).flatMap((e) => (e.rpc < 0 ? [e.rpc] : [])),
]);

/** A JSON-RPC error code as a bounded string: its decimal form when known, else `_OTHER`. */
export function rpcCodeLabel(code: number): string {
  return KNOWN_RPC_CODES.has(code) ? String(code) : ERROR_TYPE_OTHER;
}

/**
 * JSON-RPC codes that are the caller's fault; the server side does not count them as errors.
 * @see telemetry digest §3 (server side: -32700, -32600, -32601, -32602, -32002 are not errors)
 */
export const CALLER_FAULT_RPC_CODES: ReadonlySet<number> = new Set([
  RpcCode.PARSE_ERROR,
  RpcCode.INVALID_REQUEST,
  RpcCode.METHOD_NOT_FOUND,
  RpcCode.INVALID_PARAMS,
  RpcCode.RESOURCE_NOT_FOUND_BEFORE_2026,
]);

/** The outcome fields the request and upstream-call channels carry. */
export interface Outcome {
  code?: ErrorCode;
  rpcCode?: number;
  fault?: Fault;
  error?: unknown;
}

/** True when the outcome is an error answer of any kind. */
export function isErrorOutcome(o: Outcome): boolean {
  return o.code !== undefined || o.rpcCode !== undefined || o.error !== undefined;
}

/** The JSON-RPC code an outcome was answered with, when it was an error. */
export function rpcCodeOf(o: Outcome): number | undefined {
  if (o.rpcCode !== undefined) return o.rpcCode;
  if (isCatalogueCode(o.code)) return Catalogue[o.code].rpc;
  const rpc = (o.error as { rpc?: { code?: unknown } } | undefined)?.rpc?.code;
  return typeof rpc === 'number' ? rpc : undefined;
}

function errorTypeOfError(o: Outcome): string {
  if (isCatalogueCode(o.code)) return o.code;
  const code = rpcCodeOf(o);
  return code === undefined ? ERROR_TYPE_OTHER : rpcCodeLabel(code);
}

/**
 * `error.type` for the side that handled a request (the gateway toward its client): undefined on
 * success, for caller faults (a catalogue entry whose fault is `client`, such as a rate limit, or
 * a JSON-RPC code the conventions exempt) and for a drain's refusal of a new request
 * ({@link isDrainRefusal}: expected, like a rate limit; a request the drain cuts is an error);
 * otherwise the catalogue code, or the JSON-RPC code's bounded string. The span's error status
 * follows it.
 * @see telemetry digest §3 (server side)
 */
export function serverErrorType(o: Outcome): string | undefined {
  if (!isErrorOutcome(o) || isDrainRefusal(o.error)) return undefined;
  const fault = o.fault ?? (isCatalogueCode(o.code) ? Catalogue[o.code].fault : undefined);
  if (fault === 'client') return undefined;
  const rpc = rpcCodeOf(o);
  if (!isCatalogueCode(o.code) && rpc !== undefined && CALLER_FAULT_RPC_CODES.has(rpc)) return undefined;
  return errorTypeOfError(o);
}

/**
 * `error.type` for the side that sent a request (the gateway toward an upstream): every error
 * counts; the catalogue code, or the JSON-RPC code's bounded string.
 * @see telemetry digest §3 (client side)
 */
export function clientErrorType(o: Outcome): string | undefined {
  return isErrorOutcome(o) ? errorTypeOfError(o) : undefined;
}

/**
 * Longest label value learnt at run time, characters (UTF-16 code units): an upstream chooses its
 * tool names, and each series repeats its label values in every scrape, so a count bound alone
 * would still let 1,000 names of 10,000 characters add 10 MB to each. The span target uses the
 * same bound.
 */
export const MAX_LABEL_VALUE_CHARS = 128;

/**
 * A bounded set of label values learnt at run time (upstream names, tool names): the first
 * `max` distinct values of at most {@link MAX_LABEL_VALUE_CHARS} characters pass; longer ones,
 * and later new ones, become `_other` (never cut: a cut value could name a tool that does not
 * exist, or merge two that do).
 */
export interface LabelBound {
  /** The value itself when admitted, else `_other`. */
  admit(value: string): string;
}

/** Creates a {@link LabelBound} admitting at most `max` distinct values. */
export function createLabelBound(max: number): LabelBound {
  const seen = new Set<string>();
  return {
    admit(value) {
      if (value.length > MAX_LABEL_VALUE_CHARS) return OTHER;
      if (seen.has(value)) return value;
      if (seen.size >= max) return OTHER;
      seen.add(value);
      return value;
    },
  };
}
