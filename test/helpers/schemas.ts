// Test helper: validates values against a definition of an era's official JSON schema
// (the copies strict mode uses, vendored verbatim in src/strict/schemas).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { SCHEMAS_DIR } from '../../src/strict/validator.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

/** A checker for revision `rev`: `check(def, value)` fails the test when `value` is not a valid `def`. */
export function schemaOf(rev: string): (def: string, value: unknown) => void {
  const schema = JSON.parse(readFileSync(new URL(`${rev}.schema.json`, SCHEMAS_DIR), 'utf8')) as { $defs?: object };
  const ajv = schema.$defs ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(schema, 'mcp');
  const defs = schema.$defs ? '$defs' : 'definitions';
  const cache = new Map<string, ValidateFunction>();
  return (def, value) => {
    let v = cache.get(def);
    if (!v) {
      v = ajv.getSchema(`mcp#/${defs}/${def}`);
      assert.ok(v, `${rev} has no ${def}`);
      cache.set(def, v);
    }
    assert.ok(v(value), `${rev} ${def}: ${JSON.stringify(v.errors)}\n${JSON.stringify(value)}`);
  };
}
