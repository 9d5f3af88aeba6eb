// The config schema and the fragments it names are valid JSON Schema 2020-12: the loader compiles
// them without checking them against the meta-schema (that check costs start-up time), so it is here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { AUTH_SCHEMA, OUTBOUND_SCHEMA } from '../../src/auth/config.js';
import { CONFIG_SCHEMA } from '../../src/config/load.js';
import {
  HOST_AND_URL_WORDS,
  HOST_PATTERN,
  HOST_PORT_PATTERN,
  HTTP_URL_PATTERN,
  PUBLIC_BASE_URL_PATTERN,
  REDIS_URL_PATTERN,
  RESOURCE_URI_PATTERN,
} from '../../src/config/patterns.js';
import { POLICY_SCHEMA } from '../../src/policy/config.js';

const SCHEMAS = {
  'src/config/schema.json': CONFIG_SCHEMA,
  'src/auth/schema.json': AUTH_SCHEMA,
  'src/auth/outbound-schema.json': OUTBOUND_SCHEMA,
  'src/policy/schema.json': POLICY_SCHEMA,
};

test('schema.json and every fragment it names validate against the JSON Schema 2020-12 meta-schema', () => {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
  for (const [file, schema] of Object.entries(SCHEMAS)) {
    assert.equal(ajv.validateSchema(structuredClone(schema) as object), true, `${file}: ${ajv.errorsText(ajv.errors)}`);
  }
  // The check refuses what the meta-schema refuses.
  assert.equal(ajv.validateSchema({ type: 'object', properties: { port: { type: 'integer', minimum: '0' } } }), false);
  assert.equal(ajv.errorsText(ajv.errors), 'data/properties/port/minimum must be number');
});

test('every URL and host the schemas take carries one of the patterns of src/config/patterns.ts, which load.ts puts in words', () => {
  const byUnit: Record<string, readonly string[]> = {
    'URL.': [HTTP_URL_PATTERN, REDIS_URL_PATTERN],
    'http or https URL.': [HTTP_URL_PATTERN],
    'absolute http(s) URL.': [PUBLIC_BASE_URL_PATTERN],
    'URI.': [RESOURCE_URI_PATTERN],
    'host name or IP address.': [HOST_PATTERN],
    'host[:port].': [HOST_PORT_PATTERN],
  };
  const seen = new Set<string>();
  let places = 0;
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    const s = node as { description?: unknown; pattern?: unknown };
    const unit = typeof s.description === 'string' ? /Unit: (.*)$/.exec(s.description)?.[1] : undefined;
    if (unit === undefined || !(unit in byUnit) || at === 'src/config/schema.json/properties/$schema') return;
    places++;
    assert.ok(byUnit[unit].includes(s.pattern as string), `${at} (Unit: ${unit}) has pattern ${String(s.pattern)}`);
    seen.add(s.pattern as string);
  };
  for (const [file, schema] of Object.entries(SCHEMAS)) walk(schema, file);
  assert.equal(places, 15);
  assert.deepEqual([...seen].sort(), Object.keys(HOST_AND_URL_WORDS).sort());
});
