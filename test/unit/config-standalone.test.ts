// The config validator the build writes as ajv standalone code (src/config/build-validator.ts):
// a start uses it, it answers every config exactly as the schema compiled at start does (result,
// defaults and coercions, errors), and a file made from another schema is not used.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { standaloneValidatorCache } from '../../src/config/build-validator.js';
import {
  CONFIG_SCHEMA,
  compileStandalone,
  configAjv,
  configSchemaDigest,
  configValidatorOrigin,
  parseConfigText,
  readStandaloneValidator,
  sourceDigest,
  STANDALONE_VALIDATOR_CACHE,
  STANDALONE_VALIDATOR_FILE,
  validateConfig,
} from '../../src/config/load.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, '..', '..', '..');
const GENERATED = path.join(REPO_ROOT, 'dist', 'src', 'config', STANDALONE_VALIDATOR_FILE);

test('a start validates with the build standalone validator (npm test and npm run build write it)', () => {
  validateConfig({ upstreams: { demo: { transport: 'embedded' } } }, 'test', { env: {} });
  assert.equal(configValidatorOrigin(), 'standalone');
});

test('the standalone validator answers every config as the schema compiled at start does', () => {
  const standalone = createRequire(import.meta.url)(GENERATED) as { default: ValidateFunction };
  const compiled = configAjv({ optimize: false }).compile(CONFIG_SCHEMA as object);
  const deployDir = path.join(REPO_ROOT, 'deploy');
  const cases: unknown[] = readdirSync(deployDir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .map((f) => parseConfigText(readFileSync(path.join(deployDir, f), 'utf8'), f));
  cases.push(
    {},
    { upstreams: { demo: { transport: 'embedded' } } },
    { listen: { port: '7600', host: '127.0.0.1' }, upstreams: { a: { url: 'http://127.0.0.1:9/mcp', era: 'auto' } } },
    { listen: { port: 'x' }, nope: 1 },
    { upstreams: { y: { url: 'not a uri' } } },
    { upstreams: { s: { command: 'node', args: [1, true], env: { N: 2 } } }, admin: false, trustProxy: 2 },
    { upstreams: { s: { command: 'node' } }, admin: { port: '0' }, trustProxy: ['10.0.0.0/8'], logLevel: 'loud' },
    {
      upstreams: { x: { transport: 'embedded' } },
      auth: { bearer: { issuer: 'https://as.example' } },
      policy: { default: 'deny', rules: [{ name: 'r', effect: 'allow', when: 'true' }] },
    },
    { upstreams: { x: { transport: 'embedded' } }, auth: { bearer: { issuer: 7 } }, policy: { default: 'maybe' } },
    { upstreams: [], limits: { maxBodyBytes: '-1' } },
    // Host and URL patterns (test/regressions/config-input.test.ts), at the limit and past it.
    { $schema: 5, listen: { host: 'a b' }, upstreams: { a: { url: 'http://' } }, allowedHosts: ['[:::]'], cluster: { redis: 'redis://' } },
    {
      listen: { host: '::1' },
      admin: { host: 'my-host.example' },
      publicBaseUrl: 'http://a',
      upstreams: { a: { url: 'http://a' } },
      cluster: { redis: 'redis://a' },
    },
    {
      upstreams: {
        a: { url: 'http://[::1]:65535/', credentials: { tokenExchange: { tokenUrl: 'http:///t', clientId: 'c', clientSecret: 's', resource: 'https://' } } },
      },
      auth: { bearer: { issuer: 'http://a:65536', introspection: { endpoint: 'http://-', clientId: 'c', clientSecret: 's' } } },
    },
  );
  const errorsOf = (v: ValidateFunction) =>
    (v.errors ?? []).map(({ instancePath, schemaPath, keyword, params, message }) => ({ instancePath, schemaPath, keyword, params, message }));
  for (const c of cases) {
    const a = structuredClone(c);
    const b = structuredClone(c);
    const okA = standalone.default(a);
    const okB = compiled(b);
    assert.equal(okA, okB, JSON.stringify(c));
    assert.deepEqual(a, b, JSON.stringify(c));
    assert.deepEqual(errorsOf(standalone.default), errorsOf(compiled), JSON.stringify(c));
  }
});

test('a standalone validator made from another schema, or no file at all, is not used', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-standalone-'));
  try {
    const body = 'module.exports = function validate() { return true; }; module.exports.default = module.exports;';
    writeFileSync(path.join(dir, 'other.cjs'), `${body}\nmodule.exports.digest = "0000";\n`);
    assert.equal(readStandaloneValidator(path.join(dir, 'other.cjs')), undefined);
    writeFileSync(path.join(dir, 'same.cjs'), `${body}\nmodule.exports.digest = ${JSON.stringify(configSchemaDigest())};\n`);
    assert.equal(typeof readStandaloneValidator(path.join(dir, 'same.cjs')), 'function');
    assert.equal(readStandaloneValidator(path.join(dir, 'missing.cjs')), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the build writes the validator's code cache framed with its source's SHA-256, and V8 takes such a cache", () => {
  const framed = readFileSync(path.join(path.dirname(GENERATED), STANDALONE_VALIDATOR_CACHE));
  assert.deepEqual(framed.subarray(0, 32), sourceDigest(readFileSync(GENERATED, 'utf8')));
  assert.ok(framed.length > 32 + 100_000, `a cache with the compiled functions, not only the top level (${framed.length} bytes)`);
  // Made in this process (the tests may run under other V8 flags than the build, which V8 checks).
  const mine = standaloneValidatorCache(GENERATED);
  const compiled = compileStandalone(GENERATED, mine.subarray(32));
  assert.equal(compiled.cacheRejected, false);
  assert.equal(compiled.exports.default?.({ listen: { port: 'x' } }), false);
  assert.equal(compiled.exports.default?.({ listen: { port: 1 } }), true);
});

test('a code cache of another source is not used, even when that source has the same length', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-standalone-cache-'));
  try {
    // Two validators of one length that answer differently: V8's own check (the length) cannot tell them apart.
    const body = (answer: boolean) =>
      `module.exports = function validate() { return ${answer ? 'true ' : 'false'}; }; module.exports.default = module.exports;\nmodule.exports.digest = ${JSON.stringify(configSchemaDigest())};\n`;
    assert.equal(body(true).length, body(false).length);
    const yes = path.join(dir, 'yes', STANDALONE_VALIDATOR_FILE);
    const no = path.join(dir, 'no', STANDALONE_VALIDATOR_FILE);
    for (const [file, answer] of [
      [yes, true],
      [no, false],
    ] as const) {
      mkdirSync(path.dirname(file));
      writeFileSync(file, body(answer));
    }
    // The cache of `yes`, put beside `no`.
    writeFileSync(path.join(path.dirname(no), STANDALONE_VALIDATOR_CACHE), standaloneValidatorCache(yes));
    assert.equal(readStandaloneValidator(no)?.({}), false);
    assert.equal(readStandaloneValidator(yes)?.({}), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the generator writes its file when run through a symlinked path, and npm start writes it again when a current build lost it', () => {
  // A copy of the build, its node_modules linked, reached through a symlink.
  const root = mkdtempSync(path.join(tmpdir(), 'swy-gen-'));
  const link = `${root}-link`;
  try {
    cpSync(path.join(REPO_ROOT, 'dist', 'src'), path.join(root, 'dist', 'src'), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'dist', 'dialects'), path.join(root, 'dist', 'dialects'), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
    symlinkSync(root, link);
    const file = path.join(root, 'dist', 'src', 'config', STANDALONE_VALIDATOR_FILE);
    const cache = path.join(root, 'dist', 'src', 'config', STANDALONE_VALIDATOR_CACHE);
    rmSync(file, { force: true });
    rmSync(cache, { force: true });
    const viaLink = spawnSync(process.execPath, [path.join(link, 'dist', 'src', 'config', 'build-validator.js')], { encoding: 'utf8' });
    assert.equal(viaLink.status, 0, viaLink.stderr);
    assert.ok(existsSync(file), 'written through the symlink');
    assert.ok(existsSync(cache), 'its code cache written through the symlink');
    // An up-to-date stamp and no file: the stale-build check writes the file without running tsc.
    rmSync(file);
    writeFileSync(path.join(root, 'dist', '.build-stamp'), String(Date.now() + 3_600_000));
    const start = spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci', 'build-if-stale.mjs'), '--root', root], { encoding: 'utf8' });
    assert.equal(start.status, 0, start.stderr);
    assert.ok(existsSync(file), 'written again by the stale-build check');
    // And a lost code cache alone is written again too.
    rmSync(cache);
    const again = spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci', 'build-if-stale.mjs'), '--root', root], { encoding: 'utf8' });
    assert.equal(again.status, 0, again.stderr);
    assert.ok(existsSync(cache), 'the code cache written again by the stale-build check');
  } finally {
    rmSync(link, { force: true });
    rmSync(root, { recursive: true, force: true });
  }
});

test('npm start writes the code cache again when another Node (or other V8 flags) made it', () => {
  // A Node upgrade after the build left a cache V8 refuses at every start, and nothing wrote it
  // again until the next build. Other V8 flags stand in for another Node here: V8 checks both the
  // same way (its version and flag hashes in the cache's header).
  const root = mkdtempSync(path.join(tmpdir(), 'swy-gen-v8-'));
  try {
    cpSync(path.join(REPO_ROOT, 'dist', 'src'), path.join(root, 'dist', 'src'), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'dist', 'dialects'), path.join(root, 'dist', 'dialects'), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'package.json'), path.join(root, 'package.json'));
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const dir = path.join(root, 'dist', 'src', 'config');
    const other = spawnSync(process.execPath, ['--max-old-space-size=97', path.join(dir, 'build-validator.js')], { encoding: 'utf8' });
    assert.equal(other.status, 0, other.stderr);
    // Whether V8 takes the cache beside the validator, asked of a plain Node as `npm start` runs one.
    const taken = () => {
      const r = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { readFileSync } from 'node:fs';
           import { compileStandalone } from ${JSON.stringify(pathToFileURL(path.join(dir, 'load.js')).href)};
           const file = ${JSON.stringify(path.join(dir, STANDALONE_VALIDATOR_FILE))};
           const framed = readFileSync(${JSON.stringify(path.join(dir, STANDALONE_VALIDATOR_CACHE))});
           process.stdout.write(String(!compileStandalone(file, framed.subarray(32)).cacheRejected));`,
        ],
        { encoding: 'utf8' },
      );
      assert.equal(r.status, 0, r.stderr);
      return r.stdout === 'true';
    };
    assert.equal(taken(), false, 'a cache made under other flags is refused');
    writeFileSync(path.join(root, 'dist', '.build-stamp'), String(Date.now() + 3_600_000));
    const start = spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci', 'build-if-stale.mjs'), '--root', root], { encoding: 'utf8' });
    assert.equal(start.status, 0, start.stderr);
    assert.equal(taken(), true, 'the stale-build check wrote a cache this Node takes');
    // And a cache this Node made is left alone (no rebuild at every start).
    const before = statSync(path.join(dir, STANDALONE_VALIDATOR_CACHE)).mtimeMs;
    const again = spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci', 'build-if-stale.mjs'), '--root', root], { encoding: 'utf8' });
    assert.equal(again.status, 0, again.stderr);
    assert.equal(statSync(path.join(dir, STANDALONE_VALIDATOR_CACHE)).mtimeMs, before);
    // A checkout where it cannot be written again (here a generator that fails) still starts.
    const otherAgain = spawnSync(process.execPath, ['--max-old-space-size=97', path.join(dir, 'build-validator.js')], { encoding: 'utf8' });
    assert.equal(otherAgain.status, 0, otherAgain.stderr);
    writeFileSync(path.join(dir, 'build-validator.js'), "throw new Error('EACCES: read-only file system');\n");
    const readOnly = spawnSync(process.execPath, [path.join(REPO_ROOT, '.ci', 'build-if-stale.mjs'), '--root', root], { encoding: 'utf8' });
    assert.equal(readOnly.status, 0, readOnly.stderr);
    assert.match(readOnly.stderr, /code cache is of another Node and could not be written again \(Error: EACCES: read-only file system\); starting without it/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
