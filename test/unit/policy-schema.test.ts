// The policy schema fragments: they compile as the config loader compiles its schema, can be
// included by $ref, are closed with a unit on every property, carry the defaults; every
// ```yaml policy block in docs/policy.md validates and builds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import pino from 'pino';
import {
  POLICY_SCHEMA,
  compilePolicy,
  createArgumentValidator,
  createCurationInterceptor,
  createMemoryBucketStore,
  createRateLimiter,
  policyConfigProperties,
  type RootPolicyConfig,
  type UpstreamPolicyConfig,
} from '../../src/policy/index.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A validator the way the config loader builds one: strict, all errors, defaults, coercion; the fragments included by $ref. */
function loaderLike() {
  const ajv = new Ajv2020({ strict: true, allErrors: true, useDefaults: true, coerceTypes: true });
  ajv.addSchema(structuredClone(POLICY_SCHEMA));
  // The loader's own upstream entry has more keys (command, url, …): it merges the policy ones in.
  const upstream = {
    type: 'object',
    additionalProperties: false,
    properties: { command: { type: 'string' }, url: { type: 'string' }, ...policyConfigProperties('upstream') },
  };
  return ajv.compile({
    type: 'object',
    additionalProperties: false,
    properties: { ...policyConfigProperties('root'), upstreams: { type: 'object', additionalProperties: upstream } },
  });
}

/** Every subschema with its JSON Pointer. */
function subschemas(node: Json, at = '#'): Array<[string, { [k: string]: Json }]> {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return [];
  const out: Array<[string, { [k: string]: Json }]> = [[at, node]];
  for (const key of ['properties', '$defs']) {
    const map = node[key];
    if (map && typeof map === 'object' && !Array.isArray(map)) for (const [k, v] of Object.entries(map)) out.push(...subschemas(v, `${at}/${key}/${k}`));
  }
  for (const key of ['items', 'additionalProperties', 'propertyNames']) if (node[key] !== undefined) out.push(...subschemas(node[key], `${at}/${key}`));
  return out;
}

test('the fragments compile strictly, are included by $ref, and fill in the defaults', () => {
  const validate = loaderLike();
  const config = { policy: { default: 'deny' }, upstreams: { a: {}, b: { validateArguments: 'false' } } };
  assert.equal(validate(config), true, JSON.stringify(validate.errors));
  assert.deepEqual(config, {
    policy: { default: 'deny', hideDenied: false, rules: [] },
    upstreams: { a: { validateArguments: true }, b: { validateArguments: false } },
  });
  assert.equal(validate({ policy: { default: 'deny', rules: [{ name: 'x', effect: 'allow', when: 'true', extra: 1 }] } }), false);
  assert.deepEqual(
    validate.errors?.map((e) => [e.instancePath, e.keyword]),
    [['/policy/rules/0', 'additionalProperties']],
  );
});

test('every object is closed and every property describes its unit', () => {
  const bad: string[] = [];
  for (const [at, s] of subschemas(POLICY_SCHEMA as Json)) {
    if (s.type === 'object' && s.additionalProperties === undefined && s.properties !== undefined) bad.push(`${at}: not closed`);
    if (/\/properties\/[^/]+$/.test(at) && !/Unit: [^.]+\./.test(typeof s.description === 'string' ? s.description : '')) {
      // A property that is only a $ref takes the description of its target.
      const target = typeof s.$ref === 'string' ? (POLICY_SCHEMA.$defs as Record<string, { description?: string }>)[s.$ref.replace('#/$defs/', '')] : undefined;
      if (!/Unit: [^.]+\./.test(String(target?.description ?? ''))) bad.push(`${at}: no unit`);
    }
  }
  assert.deepEqual(bad, []);
});

test('every ```yaml policy block in docs/policy.md validates and builds', () => {
  const md = readFileSync(path.join(REPO_ROOT, 'docs/policy.md'), 'utf8');
  const log = pino({ level: 'silent' });
  let blocks = 0;
  for (const m of md.matchAll(/^```yaml policy\n([\s\S]*?)^```$/gm)) {
    blocks++;
    const doc = parse(m[1]) as RootPolicyConfig & { upstreams?: Record<string, UpstreamPolicyConfig & Record<string, unknown>> };
    const validate = loaderLike();
    const config = structuredClone(doc);
    assert.equal(validate(config), true, `block ${blocks}: ${JSON.stringify(validate.errors)}`);
    if (doc.policy) compilePolicy(doc.policy);
    if (doc.rateLimits) createRateLimiter({ rateLimits: doc.rateLimits, store: createMemoryBucketStore({ maxBuckets: 10 }) });
    createCurationInterceptor({ upstreams: doc.upstreams ?? {} });
    createArgumentValidator({ log, maxSchemas: 1, upstreams: doc.upstreams ?? {} });
  }
  assert.equal(blocks, 4);
});
