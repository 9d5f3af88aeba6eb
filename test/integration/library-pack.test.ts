// The package as a user gets it: `npm pack` (of the build this suite runs on), installed into an
// empty project, a TypeScript file importing `switchyard` type-checked with the repository's tsc,
// then run to serve a request.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NO_COVERAGE_ENV, REPO_ROOT } from '../helpers/gateway.js';
import { VERSION } from '../../src/version.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** What the consumer program does: typed uses of every entry point, then one request through fetch. */
const CONSUMER = `import http from 'node:http';
import Fastify from 'fastify';
import { createSwitchyard, hostIdentity, SwitchyardError, CHANNELS, type Identity, type Switchyard, type SwitchyardConfig } from 'switchyard';

const sy: Switchyard = createSwitchyard({ logLevel: 'silent' });
// Never called: only the type check must refuse it.
// @ts-expect-error a config is an object
export const refusedByTypes = () => createSwitchyard(42);
// The config is typed from the schema's keys: a whole one checks, a misspelt key or a wrong type does not.
export const typed: SwitchyardConfig = {
  upstreams: { everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], limits: { requestTimeoutMs: 60_000 } } },
  mcpServers: undefined,
  admin: false,
  policy: { default: 'allow', rules: [{ name: 'no-writes', effect: 'deny', when: 'component.name == "write"' }] },
};
// @ts-expect-error an unknown key (listn for listen)
export const misspelt: SwitchyardConfig = { listn: { port: 7600 } };
// @ts-expect-error a bound is a number of bytes
export const wrongType: SwitchyardConfig = { limits: { maxBodyBytes: 'lots' } };
// @ts-expect-error an era the schema does not know
export const unknownEra: SwitchyardConfig = { upstreams: { s: { command: 'x', era: '2025-01-01' } } };
const pat: Identity = hostIdentity('pat', { scopes: ['tools'] });

const app = Fastify();
await app.register(sy.plugin, { identity: (request) => (request.headers['x-user'] ? pat : null) });
await app.ready();
const listener: http.RequestListener = (req, res) => void sy.handle(req, res, { identity: pat });
void listener;
const channel: string = CHANNELS.requestEnd;

const res: Response = await sy.fetch(
  new Request('http://localhost/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'echo',
        arguments: { message: 'from the tarball' },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  }),
  { identity: pat },
);
let refused = '';
try {
  createSwitchyard({ upstreams: { x: { url: 'ftp://nope' } } });
} catch (err) {
  if (err instanceof SwitchyardError) refused = err.code;
}
process.stdout.write(JSON.stringify({ status: res.status, body: await res.json(), refused, channel }) + '\\n');
await app.close();
await sy.close();
`;

test('npm pack ships the build, its declarations and the schemas; the tarball installs, type-checks and serves a request', { timeout: 180_000 }, async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'switchyard-pack-'));
  t.after(() => rm(dir, { recursive: true, force: true }));

  // --ignore-scripts: this suite already built dist/ (a real `npm pack` cleans and rebuilds it
  // through `prepack` and `prepare`, which would rewrite files other tests are reading).
  const packed = await run(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: REPO_ROOT });
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = info.files.map((f) => f.path);
  for (const f of ['package.json', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/main.js', 'dist/dialects/index.js', 'dist/dialects/index.d.ts'])
    assert.ok(files.includes(f), f);
  // The config validator the build writes as standalone code (src/config/build-validator.ts).
  assert.ok(files.includes('dist/src/config/config-validator.generated.cjs'), files.join(', '));
  for (const rev of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'])
    assert.ok(files.includes(`dist/src/strict/schemas/${rev}.schema.json`), rev);
  assert.deepEqual(
    files.filter(
      (f) =>
        !/^dist\/(src|dialects)\/.+\.(js|d\.ts|json)$/.test(f) &&
        f !== 'dist/src/config/config-validator.generated.cjs' &&
        f !== 'package.json' &&
        f !== 'README.md',
    ),
    [],
    'nothing but the build, package.json and README.md',
  );
  assert.deepEqual(
    files.filter((f) => f.endsWith('.map') || f.startsWith('dist/test/')),
    [],
  );

  const app = path.join(dir, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
  const typesNode = (JSON.parse(await readFile(path.join(REPO_ROOT, 'node_modules/@types/node/package.json'), 'utf8')) as { version: string }).version;
  // Tarballs come from the npm cache where it has them; metadata from the registry.
  await run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(dir, info.filename), `@types/node@${typesNode}`], {
    cwd: app,
  });
  await writeFile(path.join(app, 'index.ts'), CONSUMER);
  await writeFile(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        outDir: 'out',
        types: ['node'],
        skipLibCheck: false,
      },
      include: ['index.ts'],
    }),
  );
  const tsc = await run(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: app,
    env: { ...process.env, ...NO_COVERAGE_ENV },
  }).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
  assert.equal('failed' in tsc ? tsc.stdout : '', '', 'the consumer type-checks against the shipped declarations');

  const out = await run(process.execPath, ['out/index.js'], { cwd: app });
  assert.deepEqual(JSON.parse(out.stdout), {
    status: 200,
    body: {
      jsonrpc: '2.0',
      id: 7,
      result: {
        content: [{ type: 'text', text: 'Echo: from the tarball' }],
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'switchyard-demo', version: VERSION } },
      },
    },
    refused: 'SWY_ERR_CONFIG_INVALID',
    channel: 'switchyard:request:end',
  });
});
