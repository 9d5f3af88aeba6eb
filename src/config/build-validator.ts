// Build step: writes the config validator as ajv standalone code beside the compiled loader
// (dist/src/config/config-validator.generated.cjs), so that a start loads it instead of compiling
// the schema. Run after tsc by `npm run build`, `npm test` and `npm start` (.ci/build-if-stale.mjs):
//
//   node dist/src/config/build-validator.js
//
// The file carries the digest of what it was made from (configSchemaDigest); the loader uses it
// only when the digest matches, and compiles the schema otherwise.
// @see https://ajv.js.org/standalone.html

import { realpathSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { _ } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { CONFIG_SCHEMA, configAjv, configSchemaDigest, STANDALONE_VALIDATOR_FILE } from './load.js';

// ajv's standalone entry is CommonJS; under NodeNext its default import is the module object.
const standaloneCode = ((standaloneModule as unknown as { default?: typeof standaloneModule }).default ?? standaloneModule) as unknown as (
  ajv: ReturnType<typeof configAjv>,
  validate: ReturnType<ReturnType<typeof configAjv>['compile']>,
) => string;

/**
 * The standalone validator's CommonJS source: ajv's code for the config schema (the `uri` format
 * taken from ajv-formats at run time), then `module.exports.digest`.
 */
export function standaloneValidatorSource(): string {
  const ajv = configAjv({ source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` });
  const validate = ajv.compile(structuredClone(CONFIG_SCHEMA) as object);
  return `${standaloneCode(ajv, validate)}\nmodule.exports.digest = ${JSON.stringify(configSchemaDigest())};\n`;
}

// Run as a script, however it is named: argv[1] keeps a symlinked path, import.meta.url does not.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const target = fileURLToPath(new URL(`./${STANDALONE_VALIDATOR_FILE}`, import.meta.url));
  // Written whole, then renamed: a start never reads half a file.
  writeFileSync(`${target}.tmp`, standaloneValidatorSource());
  renameSync(`${target}.tmp`, target);
}
