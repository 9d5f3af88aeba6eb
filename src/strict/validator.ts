// Strict mode: every message to and from clients validated against the official JSON schema of
// the era in use (vendored verbatim in ./schemas, see its PROVENANCE.md).

import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CoreLog } from '../core/exchange.js';
import type { MessageValidator, StrictViolation } from '../core/strict.js';
import type { JsonObject } from '../core/message.js';
import { textOf } from '../core/message.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

/**
 * Where the official schemas live: `schemas/` beside this file (tsc emits the JSON files next to
 * the compiled validator, and the package ships them).
 */
export const SCHEMAS_DIR = new URL('./schemas/', import.meta.url);

/** The result definition a method's successful response must match. */
const RESULT_DEF: Readonly<Record<string, string>> = {
  initialize: 'InitializeResult',
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'completion/complete': 'CompleteResult',
  'subscriptions/listen': 'SubscriptionsListenResult',
  ping: 'EmptyResult',
  'logging/setLevel': 'EmptyResult',
  'resources/subscribe': 'EmptyResult',
  'resources/unsubscribe': 'EmptyResult',
};

interface EraSchemas {
  /** Reports every violation (`allErrors`): used only for a message the quick one refused. */
  ajv: Ajv;
  /** Stops at the first violation: the check every message pays. */
  quick: Ajv;
  defs: string;
  /** Method → request or notification definition name. */
  byMethod: Map<string, string>;
  has: (def: string) => boolean;
  compiled: Map<string, ValidateFunction>;
  compiledQuick: Map<string, ValidateFunction>;
}

/** Options of the validator. */
export interface StrictOptions {
  /** `log`: report violations; `reject`: also refuse invalid client messages. */
  mode: 'log' | 'reject';
  log: CoreLog;
}

/**
 * Creates the strict-mode validator. Each era's schema is loaded on first use and each
 * definition compiled once (ajv), then reused for every message.
 * @see schema/<rev>/schema.json of the MCP specification repository
 */
export function createStrictValidator(opts: StrictOptions): MessageValidator {
  const eras = new Map<string, EraSchemas>();
  const load = (era: string): EraSchemas | undefined => {
    let e = eras.get(era);
    if (e) return e;
    let schema: { $defs?: Record<string, JsonObject>; definitions?: Record<string, JsonObject> };
    try {
      schema = JSON.parse(readFileSync(new URL(`${era}.schema.json`, SCHEMAS_DIR), 'utf8')) as typeof schema;
    } catch {
      return undefined;
    }
    const defsObj = schema.$defs ?? schema.definitions ?? {};
    const make = (allErrors: boolean): Ajv => {
      const a = schema.$defs ? new Ajv2020({ strict: false, allErrors }) : new Ajv({ strict: false, allErrors });
      addFormats(a);
      a.addSchema(schema, 'mcp');
      return a;
    };
    const ajv = make(true);
    const quick = make(false);
    const byMethod = new Map<string, string>();
    for (const [name, def] of Object.entries(defsObj)) {
      const m = (def.properties as Record<string, { const?: string }> | undefined)?.method?.const;
      if (!m || /^(Client|Server|JSONRPC)/.test(name)) continue;
      if (name.endsWith('Request') || name.endsWith('Notification')) byMethod.set(m, name);
    }
    e = { ajv, quick, defs: schema.$defs ? '$defs' : 'definitions', byMethod, has: (d) => d in defsObj, compiled: new Map(), compiledQuick: new Map() };
    eras.set(era, e);
    return e;
  };
  const compiled = (ajv: Ajv, cache: Map<string, ValidateFunction>, e: EraSchemas, def: string): ValidateFunction | undefined => {
    let v = cache.get(def);
    if (!v) {
      v = ajv.getSchema(`mcp#/${e.defs}/${def}`);
      if (v) cache.set(def, v);
    }
    return v;
  };
  // A valid message (nearly all of them) is checked by the validator that stops at the first
  // violation; only a refused one is checked again to report every violation.
  const validate = (e: EraSchemas, def: string, value: unknown): Array<{ path: string; message: string }> => {
    const q = compiled(e.quick, e.compiledQuick, e, def);
    if (!q || q(value)) return [];
    const v = compiled(e.ajv, e.compiled, e, def);
    if (!v || v(value)) return [];
    return (v.errors ?? []).slice(0, 10).map((x) => ({ path: x.instancePath || '/', message: x.message ?? 'invalid' }));
  };

  return {
    mode: opts.mode,
    check(direction, era, msg, method) {
      const e = load(era);
      if (!e || !msg || typeof msg !== 'object') return [];
      const m = msg as JsonObject;
      const found: StrictViolation[] = [];
      const add = (def: string, value: unknown, prefix = '', m2 = method) => {
        for (const x of validate(e, def, value))
          found.push({ direction, era, method: m2 ?? textOf(m.method), path: prefix + x.path, message: `${def}: ${x.message}`, envelope: false });
      };
      if (typeof m.method === 'string') {
        const def = e.byMethod.get(m.method);
        if (def) add(def, m, '', m.method);
      } else if ('error' in m) {
        add(e.has('JSONRPCErrorResponse') ? 'JSONRPCErrorResponse' : 'JSONRPCError', m);
      } else if ('result' in m) {
        add(e.has('JSONRPCResultResponse') ? 'JSONRPCResultResponse' : 'JSONRPCResponse', m);
        const r = m.result as JsonObject | undefined;
        const def = r?.resultType === 'input_required' ? 'InputRequiredResult' : method ? RESULT_DEF[method] : undefined;
        if (def && e.has(def)) add(def, r, '/result');
      }
      for (const v of found) opts.log.warn({ strict: v }, 'strict: schema violation');
      return found;
    },
  };
}
