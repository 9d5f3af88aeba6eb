// The embedded demo server: a real (small) MCP server written the 2026-07-28 way, the
// default upstream when none is configured.

import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SwitchyardError } from '../../core/errors.js';
import type { RequestContext } from '../../core/request.js';
import { NotificationHub, type ServerDescription, type Upstream } from '../../core/upstream.js';
import { textOf, type JsonObject } from '../../core/message.js';

const TOOLS = [
  {
    name: 'echo',
    title: 'Echo',
    description: 'Returns the message it is given.',
    inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'Text to echo back' } }, required: ['message'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'add',
    title: 'Add',
    description: 'Adds two numbers.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'slow',
    title: 'Slow operation',
    description: 'Works for steps × stepMs milliseconds, reporting progress after each step; stops when cancelled.',
    inputSchema: {
      type: 'object',
      properties: {
        steps: { type: 'integer', minimum: 1, maximum: 1000, default: 5, description: 'Number of steps' },
        stepMs: { type: 'integer', minimum: 0, maximum: 60000, default: 200, description: 'Duration of one step, ms' },
        failAtStep: { type: 'integer', minimum: 1, description: 'Fail with an error after this step (for testing errors on a stream)' },
      },
    },
  },
  {
    name: 'ask',
    title: 'Ask the user',
    description: 'Asks the user for their name (elicitation, as an input_required round) and greets them.',
    inputSchema: { type: 'object', properties: { question: { type: 'string', description: 'What to ask' } } },
  },
  {
    name: 'lookup',
    title: 'Lookup by region',
    description: 'Looks up a key in a region; the region is mirrored in the Mcp-Param-Region header.',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, key: { type: 'string' } },
      required: ['region', 'key'],
    },
  },
  {
    name: 'touch',
    title: 'Touch a resource',
    description: 'Emits notifications/resources/updated for a URI (for subscription tests).',
    inputSchema: { type: 'object', properties: { uri: { type: 'string' } }, required: ['uri'] },
  },
] as const;

const README_URI = 'demo://readme';
const README_TEXT = 'Switchyard embedded demo server. Tools: echo, add, slow, ask, lookup, touch.';
const ITEM_TEMPLATE = 'demo://items/{id}';
const ITEM_IDS = ['alpha', 'beta', 'gamma', 'delta'];
const NAMES = ['Ada', 'Alan', 'Alonzo', 'Barbara', 'Grace', 'Kurt'];
const STATE_TTL_MS = 5 * 60_000;

function text(t: string): JsonObject {
  return { content: [{ type: 'text', text: t }] };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function params(detail: string): SwitchyardError {
  return new SwitchyardError('SWY_ERR_REQ_PARAMS', { detail });
}

/** Options of the demo server. */
export interface DemoOptions {
  /** Server name reported in serverInfo. */
  name?: string;
  /** Version reported in serverInfo. */
  version: string;
  /**
   * Key of the HMAC that protects the `ask` tool's requestState, 32 bytes (default: random per
   * process). Replicas pass one derived from the cluster key, so a retry may land on any of them.
   */
  stateKey?: Uint8Array;
}

/**
 * Creates the embedded demo upstream: tools `echo`, `add`, `slow` (progress, cancellable),
 * `ask` (elicitation as an `input_required` round), `lookup` (an `x-mcp-header` argument),
 * `touch` (emits resources/updated); resource `demo://readme`, template `demo://items/{id}`,
 * prompt `greeting` with completions for its `name` argument.
 * @see 2026-07-28 basic/patterns/mrtr (requestState is HMAC-protected, bound to the tool call, short-lived)
 */
export function createDemoUpstream(opts: DemoOptions): Upstream {
  const hub = new NotificationHub();
  const key = opts.stateKey ? Buffer.from(opts.stateKey) : randomBytes(32);
  const desc: ServerDescription = {
    serverInfo: { name: opts.name ?? 'switchyard-demo', version: opts.version },
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
    },
    instructions: 'A demo server embedded in Switchyard. Try the echo tool.',
    upstreamRevision: '2026-07-28',
  };

  const digest = (args: unknown) =>
    createHash('sha256')
      .update(JSON.stringify(args ?? {}))
      .digest('base64url');
  const sealState = (tool: string, args: unknown): string => {
    const body = Buffer.from(JSON.stringify({ t: tool, d: digest(args), x: Date.now() + STATE_TTL_MS })).toString('base64url');
    return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
  };
  const openState = (state: unknown, tool: string, args: unknown): boolean => {
    if (typeof state !== 'string') return false;
    const [body, mac] = state.split('.');
    if (!body || !mac) return false;
    // Compare the MAC as text: base64url decoding ignores the unused low bits of the last
    // character, so comparing decoded bytes would accept altered states.
    const want = Buffer.from(createHmac('sha256', key).update(body).digest('base64url'));
    const got = Buffer.from(mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) return false;
    try {
      const s = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { t: string; d: string; x: number };
      return s.t === tool && s.d === digest(args) && s.x > Date.now();
    } catch {
      return false;
    }
  };

  const callTool = async (ctx: RequestContext): Promise<JsonObject> => {
    const name = ctx.params.name;
    const args = (ctx.params.arguments ?? {}) as JsonObject;
    if (typeof args !== 'object' || Array.isArray(args)) throw params('arguments must be an object');
    switch (name) {
      case 'echo':
        if (typeof args.message !== 'string') throw params('echo needs a string "message"');
        return text(`Echo: ${args.message}`);
      case 'add': {
        if (typeof args.a !== 'number' || typeof args.b !== 'number') throw params('add needs numbers "a" and "b"');
        const sum = args.a + args.b;
        return { ...text(String(sum)), structuredContent: { sum } };
      }
      case 'slow': {
        const steps = (args.steps ?? 5) as number;
        const stepMs = (args.stepMs ?? 200) as number;
        if (!Number.isInteger(steps) || steps < 1 || steps > 1000) throw params('steps must be an integer from 1 to 1000');
        if (!Number.isInteger(stepMs) || stepMs < 0 || stepMs > 60000) throw params('stepMs must be an integer from 0 to 60000');
        for (let i = 1; i <= steps; i++) {
          await sleep(stepMs, ctx.signal);
          ctx.onProgress({ progress: i, total: steps, message: `step ${i} of ${steps}` });
          ctx.onLog({ level: 'info', logger: 'demo.slow', data: `step ${i} done` });
          if (args.failAtStep === i) throw params(`failed at step ${i} as asked`);
        }
        return text(`Finished ${steps} steps.`);
      }
      case 'ask': {
        if (ctx.clientCapabilities.elicitation === undefined) {
          // A server MUST NOT ask for undeclared capabilities (basic/patterns/mrtr).
          throw new SwitchyardError('SWY_ERR_MODERN_CAPABILITY', { data: { requiredCapabilities: { elicitation: {} } } });
        }
        const responses = ctx.params.inputResponses as Record<string, JsonObject> | undefined;
        const answer = responses?.name;
        const { inputResponses: _r, requestState, ...original } = ctx.params;
        void _r;
        if (answer && openState(requestState, 'ask', original.arguments)) {
          if (answer.action !== 'accept') return text(`You chose to ${textOf(answer.action ?? 'cancel')}.`);
          const content = (answer.content ?? {}) as JsonObject;
          return text(`Hello, ${textOf(content.name ?? 'stranger')}!`);
        }
        return {
          resultType: 'input_required',
          inputRequests: {
            name: {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: typeof args.question === 'string' ? args.question : 'What is your name?',
                requestedSchema: { type: 'object', properties: { name: { type: 'string', title: 'Name' } }, required: ['name'] },
              },
            },
          },
          requestState: sealState('ask', original.arguments),
        };
      }
      case 'lookup':
        if (typeof args.region !== 'string' || typeof args.key !== 'string') throw params('lookup needs strings "region" and "key"');
        return text(`${args.region}/${args.key}: found`);
      case 'touch':
        if (typeof args.uri !== 'string') throw params('touch needs a string "uri"');
        hub.emit({ method: 'notifications/resources/updated', params: { uri: args.uri } });
        return text(`Touched ${args.uri}`);
      default:
        throw params(`unknown tool: ${String(name)}`);
    }
  };

  const readResource = (uri: unknown): JsonObject => {
    if (uri === README_URI) return { contents: [{ uri, mimeType: 'text/plain', text: README_TEXT }] };
    const m = typeof uri === 'string' ? /^demo:\/\/items\/([^/]+)$/.exec(uri) : null;
    if (m && ITEM_IDS.includes(m[1])) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: m[1], length: m[1].length }) }] };
    throw new SwitchyardError('SWY_ERR_REQ_RESOURCE_NOT_FOUND', { detail: String(uri), data: { uri } });
  };

  const getPrompt = (p: JsonObject): JsonObject => {
    if (p.name !== 'greeting') throw params(`unknown prompt: ${String(p.name)}`);
    const args = (p.arguments ?? {}) as JsonObject;
    if (typeof args.name !== 'string') throw params('greeting needs argument "name"');
    const style = args.style === 'formal' ? 'Good day' : 'Hi';
    return { description: 'A greeting', messages: [{ role: 'user', content: { type: 'text', text: `${style}, ${args.name}! Please greet me back.` } }] };
  };

  const complete = (p: JsonObject): JsonObject => {
    const ref = p.ref as JsonObject | undefined;
    const arg = p.argument as { name?: string; value?: string } | undefined;
    const prefix = (arg?.value ?? '').toLowerCase();
    let pool: string[] = [];
    if (ref?.type === 'ref/prompt' && ref.name === 'greeting' && arg?.name === 'name') pool = NAMES;
    else if (ref?.type === 'ref/prompt' && ref.name === 'greeting' && arg?.name === 'style') pool = ['casual', 'formal'];
    else if (ref?.type === 'ref/resource' && ref.uri === ITEM_TEMPLATE && arg?.name === 'id') pool = ITEM_IDS;
    const values = pool.filter((v) => v.toLowerCase().startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  };

  return {
    name: 'demo',
    async start() {},
    describe: () => desc,
    async request(ctx: RequestContext): Promise<JsonObject> {
      switch (ctx.method) {
        case 'tools/list':
          return { tools: TOOLS, ttlMs: 60_000, cacheScope: 'public' };
        case 'tools/call':
          return callTool(ctx);
        case 'resources/list':
          return { resources: [{ uri: README_URI, name: 'readme', title: 'Read me', mimeType: 'text/plain' }], ttlMs: 60_000, cacheScope: 'public' };
        case 'resources/templates/list':
          return {
            resourceTemplates: [{ uriTemplate: ITEM_TEMPLATE, name: 'item', title: 'Demo item', mimeType: 'application/json' }],
            ttlMs: 60_000,
            cacheScope: 'public',
          };
        case 'resources/read':
          return { ...readResource(ctx.params.uri), ttlMs: 0, cacheScope: 'public' };
        case 'prompts/list':
          return {
            prompts: [
              {
                name: 'greeting',
                title: 'Greeting',
                description: 'Greets someone by name',
                arguments: [
                  { name: 'name', description: 'Who to greet', required: true },
                  { name: 'style', description: 'casual or formal', required: false },
                ],
              },
            ],
            ttlMs: 60_000,
            cacheScope: 'public',
          };
        case 'prompts/get':
          return getPrompt(ctx.params);
        case 'completion/complete':
          return complete(ctx.params);
        default:
          throw new SwitchyardError('SWY_ERR_REQ_METHOD_NOT_FOUND', { detail: ctx.method });
      }
    },
    subscribe: (filter, sink) => hub.add(filter, sink),
    async close() {},
  };
}
