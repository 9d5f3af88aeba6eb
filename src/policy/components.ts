// What the policy interceptors share: which requests invoke a component, the unknown-name errors, globs, the log shape.

import picomatch from 'picomatch';
import { SwitchyardError, withToolName } from '../core/errors.js';
import { componentOf, type Component, type ComponentKind } from '../core/interceptor.js';
import type { RequestContext } from '../core/request.js';
import { loggedName } from '../core/logged-text.js';
import { argForDisplay } from '../core/url-text.js';

/**
 * The logging surface the policy modules use: pino's shape (fields first, constant message).
 * Pass a pino logger or a child of one.
 */
export interface PolicyLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  /**
   * pino's: false when lines of `level` are not written, so that the audit line's fields are not
   * built for nothing. A log without it gets every line.
   */
  isLevelEnabled?(level: 'info'): boolean;
}

/** Log message texts of the policy modules; fields carry the variable parts. */
export const PolicyLines = {
  decision: 'policy decision',
  ruleFailed: 'policy rule failed to evaluate',
  schemaSkipped: 'tool inputSchema not usable; arguments pass unvalidated',
  toolListTruncated: 'tool list longer than the bound; later tools pass unvalidated',
  toolListFailed: 'tool list for argument validation failed; arguments pass unvalidated',
} as const;

/**
 * Requests that invoke one component and are decided before they reach the upstream.
 * `resources/unsubscribe` is not among them: ending a subscription is always allowed.
 * @see 2025-11-25 server/tools, server/prompts, server/resources, server/utilities/completion
 */
export const INVOCATION_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read', 'resources/subscribe', 'completion/complete']);

/**
 * The method that invokes a component of each kind: list items are decided as if invoked this
 * way, so that a list shows exactly what may be called. A resource template is invoked by
 * completing its arguments; reading a URI expanded from it is decided as a `resource`.
 */
export const INVOKED_BY: Readonly<Record<ComponentKind, string>> = Object.freeze({
  tool: 'tools/call',
  prompt: 'prompts/get',
  resource: 'resources/read',
  'resource-template': 'completion/complete',
});

/**
 * The component an invocation names: `ctx.component` when the executor set it (it carries the
 * upstream's own, unprefixed name), else derived from the params.
 * @returns undefined when the method invokes nothing or its params name nothing usable.
 */
export function invokedComponent(ctx: RequestContext): Component | undefined {
  return ctx.component ?? componentOf(ctx.method, ctx.params, ctx.upstream ?? '');
}

/**
 * The error for an invocation whose params name no component (a non-string tool name, a
 * completion ref that is neither ref/prompt nor ref/resource). Refused rather than passed on,
 * so that no upstream reading the params differently is reached undecided.
 */
export function unnamedInvocationError(method: string): SwitchyardError {
  const what =
    method === 'completion/complete'
      ? 'a ref of type ref/prompt (string name) or ref/resource (string uri)'
      : method.startsWith('resources/')
        ? 'a string uri'
        : 'a string name';
  return new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `${method} needs ${what}` });
}

/**
 * The error an unknown name of each kind gets; hidden and (with `hideDenied`) denied names get
 * exactly this, so a caller cannot tell them from names that do not exist:
 * - tool: -32602 `Invalid params: unknown tool: NAME` (what the embedded demo answers)
 * - prompt: -32602 `Invalid params: unknown prompt: NAME`
 * - resource: `SWY_ERR_REQ_RESOURCE_NOT_FOUND`, -32602 `Resource not found: URI` with `data.uri`
 *   (-32002 toward eras before 2026-07-28)
 * - resource template (completion/complete): -32602 `Invalid params: unknown resource template: URI`
 * @see 2026-07-28 basic#error-codes (resource not found is -32602 with data.uri);
 *   2025-11-25 server/utilities/completion#error-handling (invalid prompt name: -32602)
 */
export function unknownComponentError(c: Pick<Component, 'kind' | 'name'>): SwitchyardError {
  switch (c.kind) {
    case 'tool':
      return new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `unknown tool: ${c.name}` });
    case 'prompt':
      return new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `unknown prompt: ${c.name}` });
    case 'resource':
      return new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: c.name, data: { uri: c.name } });
    case 'resource-template':
      return new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail: `unknown resource template: ${c.name}` });
  }
}

/**
 * The refusal of a denied invocation (`SWY_ERR_POLICY_DENIED`, -32010, in-band), naming the
 * component as the caller named it.
 */
export function deniedError(c: Pick<Component, 'kind' | 'name'>): SwitchyardError {
  return new SwitchyardError('SWY_ERR_POLICY_DENIED', { detail: `${c.kind} ${c.name}`, data: { kind: c.kind, name: c.name } });
}

/**
 * `err` as the caller should see it after a rename: a denial, unknown-name or argument error
 * (SWY_ERR_POLICY_ARGUMENTS) that names the upstream's name is rebuilt with the caller's name, so
 * that errors neither reveal the old name nor differ from what a truly unknown name gets. Other
 * errors are returned unchanged.
 */
export function withClientName(err: unknown, kind: ComponentKind, upstreamName: string, clientName: string): unknown {
  if (!(err instanceof SwitchyardError)) return err;
  if (kind === 'tool' && err.code === 'SWY_ERR_POLICY_ARGUMENTS') return withToolName(err, upstreamName, clientName);
  if (err.code === 'SWY_ERR_POLICY_DENIED' && err.data?.name === upstreamName) return deniedError({ kind, name: clientName });
  const unknown = unknownComponentError({ kind, name: upstreamName });
  if (err.code === unknown.code && err.message === unknown.message) return unknownComponentError({ kind, name: clientName });
  return err;
}

/**
 * Compiles glob patterns (picomatch syntax) into one matcher; `*` does not cross `/`, `**`
 * does, dotfiles match, a leading `!` is literal (exclusion has its own key).
 * @returns undefined when `patterns` is undefined.
 */
export function compileGlobs(patterns: readonly string[] | undefined): ((name: string) => boolean) | undefined {
  if (patterns === undefined) return undefined;
  if (patterns.length === 0) return () => false;
  return picomatch([...patterns], { dot: true, nonegate: true });
}

/**
 * The spellings of a resource URI that curation and policy decide: the URI as sent, and, when
 * WHATWG URL parsing changes it, the parsed form (`new URL(uri).href`). Upstreams built on the
 * official SDKs look a resource up by that parsed form, so `DEMO://x`, `demo://x/a/../b`,
 * `demo://x:/b` or a URI with leading blanks read the resource the parsed form names; a decision
 * on the sent text alone would let such a spelling past an `exclude` glob or a `deny` rule.
 * A resource is visible, or allowed, only when every spelling is.
 * @returns one or two strings, the URI as sent first
 * @see WHATWG URL Standard (basic URL parser: scheme and host lowercased, dot segments removed,
 *   leading and trailing C0 controls and spaces stripped, tabs and newlines removed)
 */
export function resourceUriSpellings(uri: string): readonly string[] {
  let parsed: string;
  try {
    parsed = new URL(uri).href;
  } catch {
    return [uri];
  }
  return parsed === uri ? [uri] : [uri, parsed];
}

/**
 * A component's name as an audit line writes it ({@link loggedName}); a resource's, its URI, with
 * its userinfo and credential-named query values `[redacted]` (`argForDisplay`): a signed URL's
 * query (`?X-Amz-Signature=`, `?sig=`) is its credential.
 */
export function loggedComponentName(c: Pick<Component, 'kind' | 'name'>): string {
  return loggedName(c.kind === 'resource' ? argForDisplay(c.name) : c.name);
}
