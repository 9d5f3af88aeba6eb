// The CLI loads a feature's packages only when the config uses that feature: the Redis client
// with `cluster`, jose with `auth`, prom-client with the admin listener, OpenTelemetry with the
// OTEL_* environment, CEL with a `policy`. A preload records every file the real process loads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { CLI, startCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { configFile } from '../helpers/ops.js';

const PRELOAD = pathToFileURL(path.join(REPO_ROOT, 'test/fixtures/record-loads.mjs')).href;

/** The packages each feature brings, as the ESM loader sees them (the OpenTelemetry ones Switchyard imports itself). */
const FEATURE_PACKAGES = {
  cluster: ['redis'],
  auth: ['jose'],
  admin: ['prom-client'],
  tracing: [
    '@opentelemetry/api',
    '@opentelemetry/core',
    '@opentelemetry/resources',
    '@opentelemetry/sdk-trace-base',
    '@opentelemetry/exporter-trace-otlp-http',
  ],
  policy: ['@marcbachmann/cel-js'],
} as const;
const ALL_FEATURE_PACKAGES: readonly string[] = Object.values(FEATURE_PACKAGES).flat();
/** Packages no start loads unless its config needs them. */
const STARTUP_DEFERRED: readonly string[] = ['yaml', '@fastify/ajv-compiler', '@fastify/fast-json-stringify-compiler'];
/** Every file the last {@link packagesLoaded} start loaded (file paths). */
let loadedFiles: string[] = [];

/** The package a loaded file belongs to (`@opentelemetry/api`, `redis`), `switchyard` for ours. */
function packageOf(url: string): string {
  const file = fileURLToPath(url);
  const at = file.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  if (at === -1) return 'switchyard';
  const parts = file.slice(at + '/node_modules/'.length).split(path.sep);
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** The environment without any OTEL_* variable (tracing off), plus `extra`. */
function envWith(loaded: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OTEL_')) env[k] = v;
  return { ...env, ...extra, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim(), SWITCHYARD_TEST_LOADED: loaded };
}

/** Starts the CLI with `args` under the recording preload; returns the packages loaded once `settle` has run. */
async function packagesLoaded(
  t: { after(fn: () => void | Promise<void>): void },
  args: string[],
  extraEnv: Record<string, string> = {},
  settle: (url: string) => Promise<void> = async () => {},
): Promise<Set<string>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-loads-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const loaded = path.join(dir, 'loaded.txt');
  writeFileSync(loaded, '');
  const cli = await startCli(t, args, envWith(loaded, extraEnv));
  await settle(cli.url);
  assert.equal(await cli.stop('SIGTERM'), 0, cli.stderr());
  const urls = readFileSync(loaded, 'utf8').split('\n').filter(Boolean);
  loadedFiles = urls.map((u) => fileURLToPath(u));
  return new Set(urls.map(packageOf));
}

test('the embedded demo with no cluster, auth, admin listener, tracing or policy loads none of their packages, even serving calls', async (t) => {
  const packages = await packagesLoaded(t, ['--no-admin', '--log-level', 'warn'], {}, async (url) => {
    const list = await post(url, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
    assert.equal(list.status, 200);
    const call = await post(url, modernBody(2, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), modernHeaders('tools/call', 'echo'));
    assert.equal(call.status, 200);
    assert.deepEqual((call.json as { result: { content: unknown } }).result.content, [{ type: 'text', text: 'Echo: hi' }]);
  });
  // The recorder sees packages at all: what every start needs is there.
  assert.deepEqual(
    ['commander', 'fastify', 'pino', 'switchyard'].filter((p) => !packages.has(p)),
    [],
  );
  assert.deepEqual(
    ALL_FEATURE_PACKAGES.filter((p) => packages.has(p)),
    [],
  );
});

test('a usage error, --version, --help, an emulate usage error and validate load neither fastify nor the gateway', (t) => {
  // Every CLI run used to load the emulator (and with it the gateway, fastify and every front door)
  // to parse `emulate`'s flags: a usage error cost a whole start's modules.
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-loads-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const loaded = path.join(dir, 'loaded.txt');
  // validate compiles a policy and checks the mounts' auth as a start would (src/config/compile.ts), without the gateway.
  const file = path.join(dir, 'ok.json');
  writeFileSync(
    file,
    JSON.stringify({ policy: { default: 'allow', rules: [{ name: 'r', effect: 'deny', when: 'false' }] }, upstreams: { demo: { transport: 'embedded' } } }),
  );
  for (const [args, status] of [
    [['--allowed-origin', 'not a host'], 2],
    [['--version'], 0],
    [['--help'], 0],
    [['emulate', '--era', '1999-01-01'], 2],
    [['validate', file], 0],
  ] as const) {
    writeFileSync(loaded, '');
    const run = spawnSync(process.execPath, [CLI, ...args], { env: envWith(loaded), encoding: 'utf8' });
    assert.equal(run.status, status, `${args.join(' ')}: ${run.stderr}`);
    const urls = readFileSync(loaded, 'utf8').split('\n').filter(Boolean);
    const files = urls.map((u) => path.relative(REPO_ROOT, fileURLToPath(u)));
    // The recorder sees this run at all: the CLI's own entry and commander are there.
    assert.ok(
      files.includes(path.join('dist', 'src', 'cli', 'main.js')) && urls.some((u) => packageOf(u) === 'commander'),
      `${args.join(' ')}: ${files.join(', ')}`,
    );
    assert.deepEqual(
      files.filter(
        (f) =>
          packageOf(pathToFileURL(path.join(REPO_ROOT, f)).href) === 'fastify' ||
          /^dist[\\/](src[\\/](gateway|emulate[\\/]index|transports[\\/])|dialects[\\/])/.test(f),
      ),
      [],
      args.join(' '),
    );
  }
});

test("a start loads neither the YAML parser, ajv's compiler nor fastify's schema compilers", async (t) => {
  // Each is about 15–25 ms of a start (bench/startup.mjs). The config is checked by the build's
  // standalone validator; no route of ours has a schema; ajv compiles a tool's input schema at
  // the first call that validates arguments, after the start.
  const packages = await packagesLoaded(t, ['--no-admin', '--log-level', 'warn']);
  assert.ok(packages.has('fastify') && packages.has('switchyard'), [...packages].join(', '));
  assert.deepEqual(
    [...packages].filter((p) => STARTUP_DEFERRED.includes(p)),
    [],
  );
  assert.deepEqual(
    loadedFiles.filter((f) => /[\\/]ajv[\\/]dist[\\/](2019|2020|ajv|core)\.js$/.test(f)),
    [],
  );
  // Nor the connectors of upstreams the config does not have, nor the era clients they speak through.
  assert.deepEqual(
    loadedFiles.filter((f) => /[\\/]dist[\\/](src[\\/]upstreams[\\/](stdio|http)[\\/]|dialects[\\/][^\\/]+[\\/]client\.js$)/.test(f)),
    [],
  );
});

test('a YAML config loads the YAML parser', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-loads-yaml-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, 'listen:\n  port: 0\nadmin: false\nlogLevel: warn\nupstreams:\n  demo:\n    transport: embedded\n');
  const packages = await packagesLoaded(t, ['--config', file]);
  assert.ok(packages.has('yaml'), [...packages].join(', '));
});

test('the admin listener alone brings prom-client and nothing of the other features', async (t) => {
  const packages = await packagesLoaded(t, ['--admin-port', '0', '--log-level', 'warn']);
  // prom-client itself requires @opentelemetry/api (lib/metrics/processCpuTotal.js, for exemplars);
  // none of the tracing packages Switchyard imports comes with it.
  assert.deepEqual(
    ALL_FEATURE_PACKAGES.filter((p) => packages.has(p)),
    ['prom-client', '@opentelemetry/api'],
  );
});

test('each feature configured loads its packages: cluster, auth, admin listener, tracing, policy', async (t) => {
  const file = configFile(t, {
    listen: { port: 0 },
    admin: { port: 0 },
    logLevel: 'warn',
    cluster: { key: randomBytes(32).toString('base64') },
    auth: { apiKeys: [{ name: 'ci', sha256: randomBytes(32).toString('hex') }] },
    policy: { default: 'allow', rules: [{ name: 'echo-only', effect: 'deny', when: "component.name != 'echo'" }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  // No request is made, so no span is exported to this address.
  const packages = await packagesLoaded(t, ['--config', file], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces' });
  assert.deepEqual(
    ALL_FEATURE_PACKAGES.filter((p) => !packages.has(p)),
    [],
  );
});
