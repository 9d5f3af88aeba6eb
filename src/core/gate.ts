// Which requests the core routes to an upstream at all, and the capability each needs.

import { SwitchyardError } from './errors.js';
import type { JsonObject } from './message.js';
import type { ServerDescription } from './upstream.js';

/**
 * Methods the core routes to an upstream, with the server capability each needs (null: always
 * available). A method gated on a capability the server did not advertise answers -32601.
 * @see 2025-11-25 basic/lifecycle#capability-negotiation; 2026-07-28 schema (ClientRequest)
 */
export const ROUTED_METHODS: Readonly<Record<string, string | null>> = Object.freeze({
  'tools/list': 'tools',
  'tools/call': 'tools',
  'resources/list': 'resources',
  'resources/read': 'resources',
  'resources/templates/list': 'resources',
  'prompts/list': 'prompts',
  'prompts/get': 'prompts',
  'completion/complete': 'completions',
});

/** Methods whose result may be `input_required` (2026-07-28 basic/patterns/mrtr). */
export const INPUT_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * The client capability each server-to-client request needs: a server MUST NOT send one the
 * client did not declare, in any era.
 * @see 2025-11-25 basic/lifecycle#capability-negotiation; 2026-07-28 basic/patterns/mrtr
 */
export const SERVER_REQUEST_CAPABILITY: Readonly<Record<string, string>> = Object.freeze({
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
});

/** A server-to-client request as the capability rules read it. */
export interface ServerAsk {
  method: string;
  params?: JsonObject;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The client capability one server-to-client request needs, as a `requiredCapabilities` object
 * (see {@link SERVER_REQUEST_CAPABILITY}), with the sub-capabilities some requests need beyond
 * the method's own:
 * - `elicitation/create` in URL mode needs `elicitation.url`; form mode (`mode` absent or
 *   `"form"`) needs `elicitation.form`, which an `elicitation` without `form` or `url` means
 *   (2025-11-25 client/elicitation#capabilities: `{}` is form mode only; servers MUST NOT send
 *   a mode the client did not declare; 2026-07-28 the same);
 * - `sampling/createMessage` with `tools` or `toolChoice` needs `sampling.tools` (2025-11-25
 *   client/sampling#tool-use: servers MUST NOT send tool-enabled sampling requests to clients
 *   that did not declare it; before 2025-11-25 no revision has the fields, nor their content
 *   blocks, so no older client can take such a request).
 * Returns undefined for a request that needs no capability (`ping`, unknown methods).
 */
export function capabilityFor(ask: ServerAsk): Record<string, Record<string, object>> | undefined {
  const cap = SERVER_REQUEST_CAPABILITY[ask.method];
  if (cap === undefined) return undefined;
  if (ask.method === 'elicitation/create' && ask.params?.mode === 'url') return { elicitation: { url: {} } };
  if (ask.method === 'sampling/createMessage' && (ask.params?.tools !== undefined || ask.params?.toolChoice !== undefined)) return { sampling: { tools: {} } };
  return { [cap]: {} };
}

/** True when `declared` (a client's capabilities) covers what {@link capabilityFor} says `ask` needs. */
function covers(declared: Readonly<Record<string, unknown>>, ask: ServerAsk, need: Record<string, Record<string, object>>): boolean {
  for (const [cap, subs] of Object.entries(need)) {
    const have = declared[cap];
    if (have === undefined) return false;
    for (const sub of Object.keys(subs)) if (!isObject(have) || have[sub] === undefined) return false;
    // Form mode: an elicitation capability that names modes must name form among them.
    if (ask.method === 'elicitation/create' && ask.params?.mode !== 'url' && isObject(have) && have.url !== undefined && have.form === undefined) return false;
  }
  return true;
}

/**
 * The capabilities among `asks`' needs (see {@link capabilityFor}) that `declared` lacks, as one
 * `requiredCapabilities` object (`{ elicitation: {} }`, `{ elicitation: { url: {} } }`, and
 * `{ elicitation: { form: {} } }` for a form toward a client that declared URL mode only);
 * undefined when none is missing.
 */
export function missingCapabilities(asks: Iterable<ServerAsk>, declared: Readonly<Record<string, unknown>>): Record<string, object> | undefined {
  let missing: Record<string, Record<string, object>> | undefined;
  for (const ask of asks) {
    let need = capabilityFor(ask);
    if (need === undefined || covers(declared, ask, need)) continue;
    // Form mode refused to a client that declared URL mode only: name the mode it lacks.
    if (ask.method === 'elicitation/create' && ask.params?.mode !== 'url' && declared.elicitation !== undefined) need = { elicitation: { form: {} } };
    missing ??= {};
    for (const [cap, subs] of Object.entries(need)) missing[cap] = { ...missing[cap], ...subs };
  }
  return missing;
}

/** `requiredCapabilities` as a reader says it: `elicitation.url, sampling`. */
export function capabilityNames(required: Record<string, object>): string {
  return Object.entries(required)
    .flatMap(([cap, subs]) => (Object.keys(subs).length > 0 ? Object.keys(subs).map((s) => `${cap}.${s}`) : [cap]))
    .join(', ');
}

/** True when the core routes `method` to upstreams (before capability checks). */
export function isRouted(method: string): boolean {
  return Object.hasOwn(ROUTED_METHODS, method);
}

/**
 * Refuses a routed method the upstream cannot serve: unknown to the core, or gated on a
 * capability it did not advertise. `completion/complete` predates its capability flag
 * (2024-11-05 has none), so it is not gated for upstreams of that revision.
 * @throws SwitchyardError SWY_ERR_REQ_METHOD_NOT_FOUND
 */
export function checkCapability(desc: ServerDescription, method: string): void {
  if (!isRouted(method)) throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: method });
  const cap = ROUTED_METHODS[method];
  if (cap && desc.capabilities[cap] === undefined && !(cap === 'completions' && desc.upstreamRevision === '2024-11-05')) {
    throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: `${method} (server has no ${cap} capability)` });
  }
}

/**
 * `desc` as clients of every era are told of it (`initialize`, `server/discover`): without the
 * `tasks` capability (2025-11-25 basic/utilities/tasks#capabilities), since the gateway routes no
 * `tasks/*` method (docs/scaling.md); toward 2026-07-28 it would not be valid at all (SEP-2663,
 * backward compatibility). That era's own form, the Tasks extension, is left out by its dialect.
 * A client not told of tasks must not augment a request with `task`
 * (2025-11-25 basic/utilities/tasks#tool-level-negotiation).
 * @returns `desc` itself when it advertises no tasks.
 */
export function advertisedDescription(desc: ServerDescription): ServerDescription {
  if (!Object.hasOwn(desc.capabilities, 'tasks')) return desc;
  const { tasks: _tasks, ...capabilities } = desc.capabilities;
  return { ...desc, capabilities };
}

/**
 * A client's capabilities as upstreams are told of them: what the gateway carries, no more.
 * - Without `tasks` (2025-11-25 basic/utilities/tasks#capabilities). The gateway routes no
 *   `tasks/*` method in either direction, so an upstream told that the client can take
 *   task-augmented requests (`tasks.requests`) would send it `elicitation/create` or
 *   `sampling/createMessage` with a `task` and then poll a `tasks/get` nobody answers. Under
 *   2026-07-28 a legacy `tasks` declaration counts as none (SEP-2663).
 * - `roots` without `listChanged` (2025-11-25 client/roots#capabilities), unless
 *   `o.rootsListChanged`: only a client session's own upstream sessions get its
 *   `notifications/roots/list_changed` (`Upstream.forwardNotification`), so only an initialize-era
 *   session keeps it (its shared upstream sessions and stdio children are told no roots at all,
 *   and a 2026-07-28 upstream is told none: {@link withoutRootsListChanged}). An upstream told it
 *   would come and never getting it would keep a list of roots it believes current; told it will
 *   not, it asks `roots/list` again when it needs them.
 * @param caps the client's declared capabilities (`{}` = none)
 * @param o.rootsListChanged keep `roots.listChanged` as declared (a client session whose roots changes are forwarded)
 * @returns `caps` itself when there is nothing to leave out
 */
export function capabilitiesForUpstreams(caps: JsonObject, o: { rootsListChanged?: boolean } = {}): JsonObject {
  const roots = caps.roots as JsonObject | undefined;
  const rootsChange = !o.rootsListChanged && typeof roots === 'object' && roots !== null && !Array.isArray(roots) && Object.hasOwn(roots, 'listChanged');
  if (!Object.hasOwn(caps, 'tasks') && !rootsChange) return caps;
  const { tasks: _tasks, ...rest } = caps;
  if (rootsChange) {
    const { listChanged: _listChanged, ...rootsRest } = roots;
    rest.roots = rootsRest;
  }
  return rest;
}

/**
 * `caps` without `roots.listChanged`, for an upstream no roots change is ever forwarded to: a
 * 2026-07-28 upstream (that revision has no `notifications/roots/list_changed` and declares
 * `roots: {}`: stateless-2026-07-28 §3) serving an initialize-era client, whose session keeps the
 * flag for its own upstream sessions ({@link capabilitiesForUpstreams}).
 * @returns `caps` itself when it has no `roots.listChanged`
 */
export function withoutRootsListChanged(caps: JsonObject): JsonObject {
  const roots = caps.roots;
  if (typeof roots !== 'object' || roots === null || Array.isArray(roots) || !Object.hasOwn(roots, 'listChanged')) return caps;
  const { listChanged: _listChanged, ...rest } = roots as JsonObject;
  return { ...caps, roots: rest };
}

/**
 * A `tools/list` result as clients of every era are told of it: no tool carries `execution`, and
 * a tool whose `execution.taskSupport` is `required` is left out. No client is told of tasks
 * ({@link advertisedDescription}) and a `task` param never reaches an upstream ({@link withoutTask}),
 * so `optional` means nothing here and `required` names a tool no call through the gateway can run
 * (its server answers a plain call with -32601); a 2025-11-25 client told `required` MUST augment
 * the call, while without the `tasks` capability it MUST NOT (2025-11-25
 * basic/utilities/tasks#tool-level-negotiation). Under 2026-07-28 `Tool` has no `execution` at all
 * (SEP-2663, backward compatibility: legacy task fields MUST NOT be advertised).
 * @param result the `tools/list` result (`{ tools: Tool[], nextCursor? }`, items checked objects)
 * @returns `result` itself when no tool carries `execution`
 */
export function withoutTaskSupport(result: JsonObject): JsonObject {
  const tools = result.tools;
  if (!Array.isArray(tools) || !tools.some((tool) => Object.hasOwn(tool as JsonObject, 'execution'))) return result;
  const shown: JsonObject[] = [];
  for (const tool of tools as JsonObject[]) {
    if (!Object.hasOwn(tool, 'execution')) {
      shown.push(tool);
      continue;
    }
    const { execution, ...rest } = tool;
    if ((execution as { taskSupport?: unknown } | null)?.taskSupport !== 'required') shown.push(rest);
  }
  return { ...result, tools: shown };
}

/**
 * `req` as upstreams get it: a `tools/call` without its `task` param. No client is told of tasks
 * ({@link advertisedDescription}), so the call is served as a plain one; forwarded, `task` would
 * make an upstream that serves tasks answer with a task no client could reach.
 * @returns `req` itself when there is nothing to drop.
 */
export function withoutTask<T extends { method: string; params: JsonObject }>(req: T): T {
  if (req.method !== 'tools/call' || !Object.hasOwn(req.params, 'task')) return req;
  // A receiver without the tasks capability for a request type processes it normally, ignoring
  // `task` (2025-11-25 basic/utilities/tasks#task-support-and-handling); under 2026-07-28 a
  // `task` param MUST be ignored (SEP-2663, backward compatibility).
  const { task: _task, ...params } = req.params;
  return { ...req, params };
}

/** The server-to-client requests a requestor may augment with `task` (2025-11-25 basic/utilities/tasks#capabilities: `tasks.requests`). */
const TASK_AUGMENTABLE_ASKS: ReadonlySet<string> = new Set(['elicitation/create', 'sampling/createMessage']);

/**
 * A server-to-client request's params as clients get them: an `elicitation/create` or
 * `sampling/createMessage` without its `task` param. Upstreams are told of no client `tasks`
 * capability ({@link capabilitiesForUpstreams}), so for them the gateway is a receiver without it,
 * and such a receiver processes the request normally, ignoring `task` (2025-11-25
 * basic/utilities/tasks#task-support-and-handling). Forwarded, `task` would let a client that
 * serves tasks answer with a task (`CreateTaskResult`), which the upstream would then poll with
 * `tasks/get`, a method the gateway routes to no client. Under 2026-07-28 these requests have no
 * `task` param at all (SEP-2663, backward compatibility).
 * @param method the server request's method
 * @param params its params (an object)
 * @returns `params` itself when there is nothing to drop
 */
export function askWithoutTask(method: string, params: JsonObject): JsonObject {
  if (!Object.hasOwn(params, 'task') || !TASK_AUGMENTABLE_ASKS.has(method)) return params;
  const { task: _task, ...rest } = params;
  return rest;
}
