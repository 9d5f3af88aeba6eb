// Build step: writes the config validator as ajv standalone code beside the compiled loader
// (dist/src/config/config-validator.generated.cjs), so that a start loads it instead of compiling
// the schema. Run after tsc by `npm run build`, `npm test` and `npm start` (.ci/build-if-stale.mjs):
//
//   node dist/src/config/build-validator.js
//
// The file carries the digest of what it was made from (configSchemaDigest); the loader uses it
// only when the digest matches, and compiles the schema otherwise. Beside it goes its V8 code
// cache (…generated.cjs.v8cache, framed with the source's SHA-256), taken after validating a few
// configs so that it holds the functions a start runs; V8 refuses a cache of another Node, and
// the loader then compiles the source as before (`npm start` writes such a cache again:
// .ci/build-if-stale.mjs). The cache is not in the npm package (package.json `files`): it is of
// the Node that built the package, seldom the one that installs it.
// @see https://ajv.js.org/standalone.html

import { readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { _ } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import {
  CONFIG_SCHEMA,
  compileStandalone,
  configAjv,
  configSchemaDigest,
  sourceDigest,
  STANDALONE_VALIDATOR_CACHE,
  STANDALONE_VALIDATOR_FILE,
} from './load.js';

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

/**
 * Configs the code cache is taken after: the demo's, and one with each section a schema fragment
 * describes, so that their validators are compiled (V8 compiles a function at its first call).
 */
const WARM_CONFIGS: readonly unknown[] = [
  {},
  { listen: { port: 0 }, upstreams: { demo: { transport: 'embedded' } } },
  {
    auth: { apiKeys: [{ name: 'k', sha256: '0'.repeat(64) }] },
    policy: { default: 'allow', rules: [{ name: 'r', effect: 'deny', when: 'true' }] },
    rateLimits: {},
    cluster: {},
    upstreams: { a: { command: 'x' }, b: { url: 'http://127.0.0.1:1/mcp', credentials: {} } },
  },
];

/**
 * The code cache of the standalone validator in `file` ({@link STANDALONE_VALIDATOR_CACHE}): the
 * SHA-256 of its source, then V8's cache of the script, taken after running it on
 * {@link WARM_CONFIGS} so that it has every function compiled so far.
 * @see https://nodejs.org/api/vm.html#scriptcreatecacheddata
 */
export function standaloneValidatorCache(file: string): Buffer {
  const source = readFileSync(file, 'utf8');
  const { exports, script } = compileStandalone(file, undefined, source);
  for (const config of WARM_CONFIGS) exports.default?.(structuredClone(config));
  return Buffer.concat([sourceDigest(source), script.createCachedData()]);
}

// Run as a script, however it is named: argv[1] keeps a symlinked path, import.meta.url does not.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const target = fileURLToPath(new URL(`./${STANDALONE_VALIDATOR_FILE}`, import.meta.url));
  const cache = fileURLToPath(new URL(`./${STANDALONE_VALIDATOR_CACHE}`, import.meta.url));
  // Each written whole, then renamed: a start never reads half a file. The old cache goes first:
  // V8 would refuse it for the new source anyway (it checks the source's hash).
  rmSync(cache, { force: true });
  writeFileSync(`${target}.tmp`, standaloneValidatorSource());
  renameSync(`${target}.tmp`, target);
  writeFileSync(`${cache}.tmp`, standaloneValidatorCache(target));
  renameSync(`${cache}.tmp`, cache);
}
