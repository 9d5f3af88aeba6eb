// The strict validator alone: a valid message passes the quick check, an invalid one reports every
// violation (the full validator runs only after the quick one refused). See schema/<rev>/schema.json.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { createStrictValidator, SCHEMAS_DIR, shareSubContexts } from '../../src/strict/validator.js';

const silent = { warn() {}, info() {}, error() {}, debug() {} } as never;

test('strict validator: a valid tools/call passes; one with two faults reports both paths', () => {
  const v = createStrictValidator({ mode: 'log', log: silent });
  const good = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } };
  for (let i = 0; i < 3; i++) assert.deepEqual(v.check('in', '2025-06-18', good, 'tools/call'), []);
  const bad = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7, arguments: 'not an object' } };
  const found = v.check('in', '2025-06-18', bad, 'tools/call');
  const paths = found.map((f) => f.path).sort();
  assert.deepEqual(paths, ['/params/arguments', '/params/name']);
  for (const f of found) assert.match(f.message, /^CallToolRequest: must be /);
  // The same valid message after a refused one: still nothing.
  assert.deepEqual(v.check('in', '2025-06-18', good, 'tools/call'), []);
});

test('strict validator: a result that breaks CallToolResult is reported under /result', () => {
  const v = createStrictValidator({ mode: 'log', log: silent });
  const ok = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x' }] } };
  assert.deepEqual(v.check('out', '2025-06-18', ok, 'tools/call'), []);
  const broken = { jsonrpc: '2.0', id: 1, result: { content: 'x' } };
  const found = v.check('out', '2025-06-18', broken, 'tools/call');
  assert.ok(
    found.some((f) => f.path === '/result/content' && f.message.startsWith('CallToolResult: ')),
    JSON.stringify(found),
  );
});

// The quick check of 2020-12 schemas runs without ajv's annotation tracking (its anyOf then stops
// at the first matching branch). Its verdicts must be those of the tracking validator, so check()
// must report exactly what the tracking validators report, on valid and invalid messages alike.
const reference = (era: string) => {
  const schema = JSON.parse(readFileSync(new URL(`${era}.schema.json`, SCHEMAS_DIR), 'utf8')) as { $defs?: object };
  const make = (allErrors: boolean) => {
    const a = schema.$defs ? new Ajv2020({ strict: false, allErrors }) : new Ajv({ strict: false, allErrors });
    (addFormats as unknown as (a: Ajv) => void)(a);
    a.addSchema(schema, 'mcp');
    return a;
  };
  const quick = make(false);
  const full = make(true);
  const defs = schema.$defs ? '$defs' : 'definitions';
  return (def: string, value: unknown): Array<{ path: string; message: string }> => {
    if (quick.getSchema(`mcp#/${defs}/${def}`)!(value)) return [];
    const v = full.getSchema(`mcp#/${defs}/${def}`)!;
    if (v(value)) return [];
    return (v.errors ?? []).slice(0, 10).map((x) => ({ path: x.instancePath || '/', message: `${def}: ${x.message ?? 'invalid'}` }));
  };
};

const junk = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined));
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), junk) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('image'), data: fc.oneof(fc.string(), junk), mimeType: fc.oneof(fc.constant('image/png'), junk) }),
  fc.record({ type: fc.constant('audio'), data: fc.string(), mimeType: fc.string() }, { requiredKeys: ['type', 'data'] }),
  fc.record({ type: fc.constant('resource_link'), uri: fc.oneof(fc.constant('file:///a'), fc.string()), name: fc.oneof(fc.string(), junk), size: junk }),
  fc.record({
    type: fc.constant('resource'),
    resource: fc.oneof(fc.record({ uri: fc.constant('file:///a'), text: fc.string() }), fc.record({ uri: fc.string(), blob: junk }), junk),
  }),
  fc.record({
    type: fc.string(),
    annotations: fc.oneof(fc.record({ audience: fc.array(fc.constantFrom('user', 'assistant', 'x')), priority: fc.double() }), junk),
  }),
  junk,
);
const meta = fc.oneof(
  fc.constant(undefined),
  fc.record({ 'io.modelcontextprotocol/serverInfo': fc.oneof(fc.record({ name: fc.string(), version: fc.string() }), junk) }),
  junk,
);
const result = fc.record(
  {
    content: fc.oneof(fc.array(block, { maxLength: 4 }), junk),
    resultType: fc.oneof(fc.constantFrom('complete', 'input_required'), junk),
    isError: fc.oneof(fc.boolean(), junk),
    structuredContent: junk,
    _meta: meta,
  },
  { requiredKeys: [] },
);
const id = fc.oneof(fc.integer(), fc.string(), junk);
const response = fc.oneof(
  fc.record({ jsonrpc: fc.oneof(fc.constant('2.0'), junk), id, result: fc.oneof(result, junk) }, { requiredKeys: ['result'] }),
  fc.record(
    {
      jsonrpc: fc.constant('2.0'),
      id,
      error: fc.oneof(fc.record({ code: fc.oneof(fc.integer(), junk), message: fc.oneof(fc.string(), junk), data: junk }), junk),
    },
    { requiredKeys: ['error'] },
  ),
);
const request = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), junk),
    id,
    method: fc.constantFrom(
      'tools/call',
      'tools/list',
      'resources/read',
      'prompts/get',
      'initialize',
      'ping',
      'notifications/progress',
      'sampling/createMessage',
      'elicitation/create',
      'no/such',
    ),
    params: fc.oneof(
      fc.record(
        {
          name: fc.oneof(fc.string(), junk),
          arguments: junk,
          uri: junk,
          cursor: junk,
          messages: fc.array(fc.record({ role: fc.constantFrom('user', 'x'), content: block })),
          _meta: junk,
        },
        { requiredKeys: [] },
      ),
      junk,
    ),
  },
  { requiredKeys: ['method'] },
);
const METHODS = ['tools/call', 'tools/list', 'resources/read', 'prompts/get', 'initialize', 'completion/complete', 'no/such'];

for (const era of ['2026-07-28', '2025-11-25', '2025-06-18', '2024-11-05']) {
  test(`strict validator, ${era}: check() reports what the tracking validators report, for any message`, () => {
    const v = createStrictValidator({ mode: 'log', log: silent });
    const ref = reference(era);
    const defs = JSON.parse(readFileSync(new URL(`${era}.schema.json`, SCHEMAS_DIR), 'utf8')) as {
      $defs?: Record<string, object>;
      definitions?: Record<string, object>;
    };
    const has = (d: string) => d in (defs.$defs ?? defs.definitions ?? {});
    const envelope = (error: boolean) =>
      error
        ? has('JSONRPCErrorResponse')
          ? 'JSONRPCErrorResponse'
          : 'JSONRPCError'
        : has('JSONRPCResultResponse')
          ? 'JSONRPCResultResponse'
          : 'JSONRPCResponse';
    const RESULT: Record<string, string> = {
      'tools/call': 'CallToolResult',
      'tools/list': 'ListToolsResult',
      'resources/read': 'ReadResourceResult',
      'prompts/get': 'GetPromptResult',
      initialize: 'InitializeResult',
      'completion/complete': 'CompleteResult',
    };
    let invalid = 0;
    fc.assert(
      fc.property(response, fc.constantFrom(...METHODS), (msg, method) => {
        const m = JSON.parse(JSON.stringify(msg)) as Record<string, unknown>;
        const want = 'error' in m ? ref(envelope(true), m) : 'result' in m ? ref(envelope(false), m) : [];
        const r = m.result as Record<string, unknown> | undefined;
        if ('result' in m && !('error' in m)) {
          const def = r?.resultType === 'input_required' ? 'InputRequiredResult' : RESULT[method];
          if (def && has(def)) want.push(...ref(def, r).map((x) => ({ ...x, path: x.path === '/' ? '/result' : `/result${x.path}` })));
        }
        const got = v.check('out', era, m, method).map((x) => ({ path: x.path, message: x.message }));
        if (want.length > 0) invalid++;
        assert.deepEqual(got, want);
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(request, (msg) => {
        const m = JSON.parse(JSON.stringify(msg)) as Record<string, unknown>;
        const def = Object.entries(defs.$defs ?? defs.definitions ?? {}).find(
          ([n, d]) =>
            !/^(Client|Server|JSONRPC)/.test(n) &&
            /(Request|Notification)$/.test(n) &&
            (d as { properties?: { method?: { const?: string } } }).properties?.method?.const === m.method,
        )?.[0];
        const want = def ? ref(def, m) : [];
        const got = v.check('in', era, m).map((x) => ({ path: x.path, message: x.message }));
        if (want.length > 0) invalid++;
        assert.deepEqual(got, want);
      }),
      { numRuns: 400 },
    );
    // The property saw invalid messages, not only valid ones.
    assert.ok(invalid > 100, String(invalid));
  });
}

/** Bytes `fn` allocates on the JS heap, from V8's used heap before and after each collection (v8.GCProfiler). */
function allocatedBy(fn: () => void): number {
  const profiler = new v8.GCProfiler();
  profiler.start();
  const used0 = v8.getHeapStatistics().used_heap_size;
  fn();
  const used1 = v8.getHeapStatistics().used_heap_size;
  let allocated = 0;
  let after = used0;
  for (const gc of profiler.stop().statistics) {
    allocated += gc.beforeGC.heapStatistics.usedHeapSize - after;
    after = gc.afterGC.heapStatistics.usedHeapSize;
  }
  return allocated + used1 - after;
}

// The quick validators call each other (a $ref ajv does not inline: a content block, _meta) with
// one shared context: ajv's generated code made an object and a path string per call, 512 B for
// this request and its result; with the shared context nothing at all.
test('strict validator: a valid 2026-07-28 tools/call and its result are checked without allocating', () => {
  const v = createStrictValidator({ mode: 'log', log: silent });
  const req = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: { message: 'hi' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const res = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'x' }], resultType: 'complete' } };
  let found = 0;
  const pairs = (n: number) => () => {
    for (let i = 0; i < n; i++) found += v.check('in', '2026-07-28', req, 'tools/call').length + v.check('out', '2026-07-28', res, 'tools/call').length;
  };
  pairs(20_000)(); // compiled and optimized
  const perPair = allocatedBy(pairs(20_000)) / 20_000;
  assert.equal(found, 0);
  // 512 B a pair when each call made its context; a bound well above V8's own noise (under 1 B).
  assert.ok(perPair < 64, `${perPair} B a pair`);
});

test('shareSubContexts: calls get the shared context; code that reads the context is left as generated', () => {
  const sig = 'function validate1(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){';
  const call = 'validate2(data1[i0], {instancePath:instancePath+"/content/" + i0,parentData:data1,parentDataProperty:i0,rootData,dynamicAnchors})';
  const shared = 'validate2(data1[i0], self.switchyardSharedContext)';
  assert.equal(shareSubContexts(`${sig}if(!(${call})){return false;}}`), `${sig}if(!(${shared})){return false;}}`);
  // Draft-07 code (no dynamicAnchors) too.
  const sig7 = 'function validate1(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){';
  const call7 = 'validate2(data.params, {instancePath:instancePath+"/params",parentData:data,parentDataProperty:"params",rootData})';
  assert.equal(shareSubContexts(`${sig7}return ${call7};}`), `${sig7}return validate2(data.params, self.switchyardSharedContext);}`);
  // $dynamicRef reads dynamicAnchors, $data reads rootData: such code keeps its contexts.
  const dynamic = `${sig}let _v0 = dynamicAnchors.meta;if(!(${call})){return false;}}`;
  assert.equal(shareSubContexts(dynamic), dynamic);
  const data = `${sig}if(rootData.x){return ${call};}}`;
  assert.equal(shareSubContexts(data), data);
});
