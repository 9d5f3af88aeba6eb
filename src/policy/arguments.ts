// Validates tools/call arguments against the tool's advertised inputSchema before the upstream sees them.

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Ajv, Options, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import { argumentsError, SwitchyardError } from '../core/errors.js';
import { deriveContext, type Dispatch, type Interceptor } from '../core/interceptor.js';
import type { JsonObject } from '../core/message.js';
import type { RequestContext } from '../core/request.js';
import { VALIDATE_ARGUMENTS_DEFAULT, checkFragment, type UpstreamPolicyConfig } from './config.js';
import { PolicyLines, invokedComponent, type PolicyLog } from './components.js';
import { loggedName } from '../core/logged-text.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const requireHere = createRequire(import.meta.url);

type AjvLike = Ajv | Ajv2019 | Ajv2020;
type Draft = '2020-12' | '2019-09' | 'draft-07';

/** Options of {@link createArgumentValidator}. */
export interface ArgumentValidatorOptions {
  /** Receives one warning per tool whose schema cannot be used, and list failures. */
  log: PolicyLog;
  /** Compiled validators kept (LRU, keyed by a hash of the schema); the least recently used is dropped. */
  maxSchemas: number;
  /**
   * Upstream entries by config name; only `validateArguments` is read (schema default: on), so
   * the config loader's upstream map can be passed as it is. Upstreams not named here use the default.
   */
  upstreams?: Readonly<Record<string, UpstreamPolicyConfig>>;
  /** How long an upstream's tool list is trusted, ms (default 60,000); `invalidate` ends it early. */
  listTtlMs?: number;
  /** Pages of tools/list read per upstream (default 50). */
  maxListPages?: number;
  /** Tools remembered per upstream (default 10,000); tools past the bound pass unvalidated. */
  maxToolsPerUpstream?: number;
  /** Upstreams whose tool lists are kept (default 1,000). */
  maxUpstreams?: number;
  /** Monotonic clock, ms (default `performance.now`), for the list TTL. */
  now?: () => number;
}

/** The argument validator: an interceptor plus the seam that forgets a cached tool list. */
export interface ArgumentValidator extends Interceptor {
  /** Forgets `upstream`'s tool list (call it on `notifications/tools/list_changed` from that upstream). */
  invalidate(upstream: string): void;
}

interface ToolTable {
  atMs: number;
  schemas: Map<string, unknown>;
}

interface Compiled {
  validate?: ValidateFunction;
  /** Why the schema is not used. */
  error?: string;
  ajv?: AjvLike;
  schema?: object;
}

/** The draft a schema declares; 2020-12 when it declares none (2025-11-25 server/tools: JSON Schema 2020-12 is the default). */
function draftOf(schema: JsonObject): Draft | undefined {
  const s = schema.$schema;
  if (s === undefined) return '2020-12';
  if (typeof s !== 'string') return undefined;
  const u = s.replace(/#$/, '').replace(/^http:/, 'https:');
  if (u === 'https://json-schema.org/draft/2020-12/schema') return '2020-12';
  if (u === 'https://json-schema.org/draft/2019-09/schema') return '2019-09';
  if (u === 'https://json-schema.org/draft-07/schema') return 'draft-07';
  return undefined;
}

/**
 * One ajv instance of a draft. Strict in what it accepts as arguments: no type coercion, no
 * default insertion, no removal of extra properties, no `loadSchema` (a remote `$ref` fails to
 * compile). Not ajv's strict-schema mode: that refuses keywords it does not know, and JSON Schema
 * 2020-12 §6.5 says unknown keywords are annotations — the spec's own `x-mcp-header` is one.
 */
function newAjv(draft: Draft): AjvLike {
  const opts = {
    strict: false,
    strictNumbers: true,
    allErrors: false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    validateFormats: true,
    addUsedSchema: false,
    logger: false as const,
  };
  // ajv and ajv-formats (CommonJS) are loaded by the first upstream that validates arguments,
  // not at import: a start without one does not pay for them (bench/startup.mjs).
  const [file, name] = draft === '2020-12' ? ['ajv/dist/2020.js', 'Ajv2020'] : draft === '2019-09' ? ['ajv/dist/2019.js', 'Ajv2019'] : ['ajv', 'Ajv'];
  const Ctor = (requireHere(file) as Record<string, new (o: Options) => AjvLike>)[name];
  const ajv = new Ctor(opts);
  (requireHere('ajv-formats') as (a: AjvLike) => void)(ajv);
  return ajv;
}

/**
 * Creates the argument validator. On `tools/call` of an upstream with `validateArguments` on,
 * it checks `arguments` (`{}` when absent) against the tool's `inputSchema` before calling
 * `next`. The schema comes from the upstream's own `tools/list`, read through `next` (every page,
 * up to `maxListPages`) and cached per upstream for `listTtlMs` or until `invalidate(upstream)`.
 * What passes unvalidated: a tool the list does not name (the upstream answers for it), a
 * schema that cannot compile (remote `$ref`, unknown `$schema`, invalid schema; one warning per
 * tool and schema), and every call while the list cannot be read (one warning until it can).
 * Put it innermost: its list call then reaches the upstream directly, and the tool names it sees
 * are the upstream's own.
 * @throws SwitchyardError SWY_ERR_CONFIG_INVALID (from the factory) for a bad `maxSchemas` or
 *   `validateArguments`; SWY_ERR_POLICY_ARGUMENTS (-32602, per request): `data: { tool,
 *   instancePath, keyword, schemaPath, params }`, the message naming the JSON Pointer and the keyword
 * @see 2025-11-25 server/tools (inputSchema, JSON Schema 2020-12 default); RFC 6901 (JSON Pointer)
 */
export function createArgumentValidator(opts: ArgumentValidatorOptions): ArgumentValidator {
  const { log } = opts;
  if (!Number.isInteger(opts.maxSchemas) || opts.maxSchemas < 1)
    throw new SwitchyardError('SWY_ERR_CONFIG_INVALID', { detail: 'maxSchemas must be an integer >= 1' });
  const listTtlMs = opts.listTtlMs ?? 60_000;
  const maxListPages = opts.maxListPages ?? 50;
  const maxTools = opts.maxToolsPerUpstream ?? 10_000;
  const maxUpstreams = opts.maxUpstreams ?? 1_000;
  const now = opts.now ?? (() => performance.now());
  const defaultOn = VALIDATE_ARGUMENTS_DEFAULT;
  const enabled = new Map<string, boolean>();
  for (const [name, entry] of Object.entries(opts.upstreams ?? {})) {
    const given: unknown = entry?.validateArguments;
    // A boolean or nothing is all the schema allows: only another value needs the fragment's
    // validator (compiling it costs start-up time), for its error.
    if (given === undefined || typeof given === 'boolean') {
      enabled.set(name, given ?? defaultOn);
      continue;
    }
    const at = `/upstreams/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const checked = checkFragment<UpstreamPolicyConfig>('upstream', { validateArguments: given }, at);
    enabled.set(name, checked.validateArguments ?? defaultOn);
  }

  const tables = new LRUCache<string, ToolTable>({ max: maxUpstreams });
  const inflight = new Map<string, { p: Promise<ToolTable>; signal: AbortSignal }>();
  /** Upstreams whose list failed, warned about once until a list succeeds. */
  const failing = new LRUCache<string, true>({ max: maxUpstreams });
  const compiled = new LRUCache<string, Compiled>({
    max: opts.maxSchemas,
    dispose: (c) => {
      // ajv keeps every compiled schema; dropping it here keeps ajv as bounded as this cache.
      if (c.ajv && c.schema) c.ajv.removeSchema(c.schema);
    },
  });
  const warned = new LRUCache<string, true>({ max: opts.maxSchemas });
  const shared = new Map<Draft, { ajv: AjvLike; uses: number }>();

  const readTools = async (next: Dispatch, ctx: RequestContext, upstream: string): Promise<ToolTable> => {
    const schemas = new Map<string, unknown>();
    let cursor: string | undefined;
    let truncated = false;
    for (let page = 0; ; page++) {
      if (page === maxListPages) {
        truncated = true;
        break;
      }
      const res = await next(deriveContext(ctx, { method: 'tools/list', params: cursor ? { cursor } : {}, component: undefined, progressToken: undefined }));
      for (const t of Array.isArray(res.tools) ? (res.tools as JsonObject[]) : []) {
        if (schemas.size >= maxTools) {
          truncated = true;
          break;
        }
        if (t && typeof t.name === 'string') schemas.set(t.name, t.inputSchema);
      }
      cursor = typeof res.nextCursor === 'string' ? res.nextCursor : undefined;
      if (!cursor || truncated) break;
    }
    if (truncated) log.warn({ upstream, maxTools, maxListPages }, PolicyLines.toolListTruncated);
    return { atMs: now(), schemas };
  };

  /** The upstream's table while it is fresh (within `listTtlMs`), else undefined. */
  const freshTable = (upstream: string): ToolTable | undefined => {
    const hit = tables.get(upstream);
    return hit && now() - hit.atMs < listTtlMs ? hit : undefined;
  };

  const tableOf = async (next: Dispatch, ctx: RequestContext, upstream: string): Promise<ToolTable> => {
    const hit = freshTable(upstream);
    if (hit) return hit;
    let run = inflight.get(upstream);
    // Upstream names come from the config, but the map is bounded all the same: past the bound, reads are not shared.
    if (!run && inflight.size >= maxUpstreams) return readTools(next, ctx, upstream);
    if (!run) {
      const p = readTools(next, ctx, upstream);
      const entry = { p, signal: ctx.signal };
      run = entry;
      inflight.set(upstream, entry);
      p.then(
        (t) => {
          // A list invalidated while it was being read is not stored.
          if (inflight.get(upstream) === entry) tables.set(upstream, t);
        },
        () => {},
      ).finally(() => {
        if (inflight.get(upstream) === entry) inflight.delete(upstream);
      });
    }
    try {
      return await run.p;
    } catch (err) {
      // Another caller's read ended with its own cancellation: read again, on this request's signal.
      if (run.signal !== ctx.signal && run.signal.aborted && !ctx.signal.aborted) return readTools(next, ctx, upstream);
      throw err;
    }
  };

  const compile = (schema: unknown): Compiled => {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return { error: 'inputSchema is not an object' };
    const draft = draftOf(schema as JsonObject);
    if (!draft) return { error: `unsupported $schema ${JSON.stringify((schema as JsonObject).$schema)}` };
    let s = shared.get(draft);
    if (!s || s.uses >= opts.maxSchemas) {
      // Start a new instance now and then: nested `$id`s stay registered in ajv after removeSchema.
      s = { ajv: newAjv(draft), uses: 0 };
      shared.set(draft, s);
    }
    s.uses++;
    try {
      return { validate: s.ajv.compile(schema), ajv: s.ajv, schema };
    } catch {
      s.ajv.removeSchema(schema);
    }
    // A clash with another schema's `$id` on the shared instance: compile alone.
    const own = newAjv(draft);
    try {
      return { validate: own.compile(schema), ajv: own, schema };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  };

  // A table's schema objects live as long as the table: the validator of each is remembered on
  // the object itself, so a call does not serialize and hash its tool's schema again.
  const bySchema = new WeakMap<object, { hash: string; c: Compiled }>();
  const validatorOf = (upstream: string, tool: string, schema: unknown): ValidateFunction | undefined => {
    const known = typeof schema === 'object' && schema !== null ? bySchema.get(schema) : undefined;
    const hash =
      known?.hash ??
      createHash('sha256')
        .update(JSON.stringify(schema) ?? 'undefined')
        .digest('base64url');
    let c = known?.c ?? compiled.get(hash);
    if (!c) {
      c = compile(schema);
      compiled.set(hash, c);
    }
    if (!known && typeof schema === 'object' && schema !== null) bySchema.set(schema, { hash, c });
    if (c.error !== undefined) {
      const key = `${upstream}\0${tool}\0${hash}`;
      if (!warned.has(key)) {
        warned.set(key, true);
        log.warn({ upstream, tool: loggedName(tool), error: c.error }, PolicyLines.schemaSkipped);
      }
    }
    return c.validate;
  };

  /**
   * Checks a call's arguments against its tool's `inputSchema` in `table`, then goes on.
   * @throws SwitchyardError SWY_ERR_POLICY_ARGUMENTS (synchronously) when they do not validate
   */
  const checked = (next: Dispatch, ctx: RequestContext, upstream: string, tool: string, table: ToolTable): Promise<JsonObject> => {
    if (failing.size > 0) failing.delete(upstream);
    if (!table.schemas.has(tool)) return next(ctx);
    const validate = validatorOf(upstream, tool, table.schemas.get(tool));
    const args = ctx.params.arguments === undefined ? {} : ctx.params.arguments;
    if (validate && !validate(args)) {
      const e = validate.errors?.[0];
      const at = e?.instancePath || '(root)';
      throw argumentsError(tool, `${at} ${e?.message ?? 'is invalid'} (keyword ${e?.keyword ?? 'unknown'})`, {
        instancePath: e?.instancePath ?? '',
        keyword: e?.keyword ?? '',
        schemaPath: e?.schemaPath ?? '',
        params: e?.params ?? {},
      });
    }
    return next(ctx);
  };

  // Not an async function: it runs on every request of a validating upstream (the default), and
  // a call whose tool table is fresh (nearly all) is checked and passed on at once, the next
  // stage's promise returned as it is; an async frame cost every request its own promise and an
  // await. Only a call that must read the tool list waits for it. What is thrown before the next
  // stage runs becomes a rejection, as from an async function.
  const interceptor: Interceptor = (next) => (ctx) => {
    try {
      if (ctx.method !== 'tools/call') return next(ctx);
      const upstream = ctx.upstream ?? '';
      if (!(enabled.get(upstream) ?? defaultOn)) return next(ctx);
      const tool = invokedComponent(ctx);
      if (!tool) return next(ctx);
      // A fresh table is used without a turn of the event loop (every tools/call asks).
      const fresh = freshTable(upstream);
      if (fresh) return checked(next, ctx, upstream, tool.name, fresh);
      return tableOf(next, ctx, upstream).then(
        (table) => checked(next, ctx, upstream, tool.name, table),
        (err: unknown) => {
          if (ctx.signal.aborted) throw err;
          if (!failing.has(upstream)) {
            failing.set(upstream, true);
            log.warn({ upstream, error: err instanceof Error ? err.message : String(err) }, PolicyLines.toolListFailed);
          }
          return next(ctx);
        },
      );
    } catch (err) {
      return Promise.reject(err);
    }
  };

  return Object.assign(interceptor, {
    invalidate(upstream: string): void {
      tables.delete(upstream);
      inflight.delete(upstream);
    },
  });
}
