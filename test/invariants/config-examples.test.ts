// Every example config validates, and the schema keeps its promises: limits in step with
// DEFAULT_LIMITS, a unit on every property, closed objects, enums equal to the code's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { LOG_LEVEL_NAMES } from '../../src/log/logger.js';
import { CONFIG_SCHEMA, ISOLATIONS, loadConfig, parseConfigText, TRANSPORT_NAMES, UPSTREAM_ERAS, validateConfig } from '../../src/config/load.js';
import { REPO_ROOT } from '../helpers/gateway.js';

/** Every `${VAR}` an example names is "set", to a value long enough for requestStateKey. */
const ANY_ENV = new Proxy({}, { get: (_, k) => (typeof k === 'string' ? `example-value-of-${k}-0123456789abcdef` : undefined) });

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const schema = CONFIG_SCHEMA as unknown as { [k: string]: Json };

/** Every subschema, with its JSON Pointer in schema.json. */
function subschemas(node: Json, at = '#'): Array<[string, { [k: string]: Json }]> {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return [];
  const out: Array<[string, { [k: string]: Json }]> = [[at, node]];
  for (const key of ['properties', '$defs', 'dependentSchemas']) {
    const map = node[key];
    if (map && typeof map === 'object' && !Array.isArray(map)) for (const [k, v] of Object.entries(map)) out.push(...subschemas(v, `${at}/${key}/${k}`));
  }
  for (const key of ['items', 'additionalProperties', 'propertyNames']) if (node[key] !== undefined) out.push(...subschemas(node[key], `${at}/${key}`));
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (Array.isArray(node[key])) node[key].forEach((v, i) => out.push(...subschemas(v, `${at}/${key}/${i}`)));
  return out;
}

const get = (p: string): { [k: string]: Json } =>
  p
    .replace(/^#\//, '')
    .split('/')
    .reduce((n: Json, k) => (n as { [k: string]: Json })[k], schema as Json) as { [k: string]: Json };

test('every config in deploy/ validates', async () => {
  const dir = path.join(REPO_ROOT, 'deploy');
  const files = readdirSync(dir).filter((f) => /\.(ya?ml|json)$/.test(f));
  assert.ok(files.includes('switchyard.yaml') && files.includes('mcp-servers.json'), files.join(', '));
  for (const f of files) {
    const c = await loadConfig(path.join(dir, f), { env: ANY_ENV });
    assert.ok(Object.keys(c.upstreams).length >= 1, f);
  }
});

test('every ```yaml config / ```json config block in docs/ validates', () => {
  let blocks = 0;
  for (const f of readdirSync(path.join(REPO_ROOT, 'docs')).filter((n) => n.endsWith('.md'))) {
    const md = readFileSync(path.join(REPO_ROOT, 'docs', f), 'utf8');
    for (const m of md.matchAll(/^```(yaml|json) config\n([\s\S]*?)^```$/gm)) {
      blocks++;
      const source = `docs/${f} block ${blocks}`;
      assert.doesNotThrow(() => validateConfig(parseConfigText(m[2], `${source}.${m[1]}`), source, { env: ANY_ENV }), source);
    }
  }
  assert.ok(blocks >= 3, `found ${blocks} config blocks`);
});

test('schema defaults for limits equal DEFAULT_LIMITS; per-mount overrides are the same keys minus the listener-wide ones, without defaults', () => {
  const limits = get('#/$defs/limits/properties');
  assert.deepEqual(Object.fromEntries(Object.entries(limits).map(([k, v]) => [k, (v as { default: Json }).default])), { ...DEFAULT_LIMITS });
  assert.deepEqual(Object.keys(limits), Object.keys(DEFAULT_LIMITS));
  const overrides = get('#/$defs/limitOverrides/properties');
  assert.deepEqual(
    Object.keys(overrides),
    Object.keys(DEFAULT_LIMITS).filter(
      (k) =>
        ![
          'maxConnections',
          'headTimeoutMs',
          'bodyTimeoutMs',
          'shutdownGraceMs',
          'firstByteTimeoutMs',
          'maxConnectionsPerAddress',
          'streamReserveDivisor',
          'lingerTimeMs',
          'lingerIdleMs',
          'lingerMaxBytes',
        ].includes(k),
    ),
  );
  for (const [k, v] of Object.entries(overrides)) {
    const { default: _d, description: _a, ...full } = limits[k] as { [k: string]: Json };
    const { description: _b, ...over } = v as { [k: string]: Json };
    assert.equal('default' in (v as object), false, k);
    assert.deepEqual(over, full, k);
  }
  // A config that names no limits gets exactly DEFAULT_LIMITS.
  assert.deepEqual(validateConfig({ upstreams: { a: { command: 'x' } } }, 'test', { env: {} }).limits, DEFAULT_LIMITS);
});

test('every schema property has a description that states its unit', () => {
  const missing: string[] = [];
  for (const [at, s] of subschemas(schema)) {
    if (!/\/(properties|\$defs)\/[^/]+$|\/(items|additionalProperties)$/.test(at)) continue;
    if (at.endsWith('/additionalProperties') && typeof s.$ref === 'string') continue; // described where it points
    if (typeof s.description !== 'string' || !/ Unit: .+\.$/.test(s.description)) missing.push(at);
  }
  assert.deepEqual(missing, []);
});

test('every object in the schema is closed: additionalProperties false, or a map with propertyNames', () => {
  const open: string[] = [];
  for (const [at, s] of subschemas(schema)) {
    if (s.type !== 'object') continue;
    const closed = s.additionalProperties === false || (typeof s.additionalProperties === 'object' && s.propertyNames !== undefined);
    if (!closed) open.push(at);
  }
  assert.deepEqual(open, []);
});

test('schema enums equal the constants the code uses', () => {
  const up = get('#/$defs/upstream/properties') as Record<string, { enum: Json }>;
  assert.deepEqual(up.era.enum, [...UPSTREAM_ERAS]);
  assert.deepEqual(up.isolation.enum, [...ISOLATIONS]);
  assert.deepEqual(up.transport.enum, [...TRANSPORT_NAMES]);
  assert.deepEqual(up.type.enum, [...TRANSPORT_NAMES]);
  assert.deepEqual(get('#/properties/logLevel').enum, [...LOG_LEVEL_NAMES]);
});
