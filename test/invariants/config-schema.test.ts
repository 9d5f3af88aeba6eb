// The config schema and the fragments it names are valid JSON Schema 2020-12: the loader compiles
// them without checking them against the meta-schema (that check costs start-up time), so it is here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { AUTH_SCHEMA, OUTBOUND_SCHEMA } from '../../src/auth/config.js';
import { CONFIG_SCHEMA } from '../../src/config/load.js';
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
