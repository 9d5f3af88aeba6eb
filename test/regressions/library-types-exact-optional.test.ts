// Found by a trial as an embedding developer: a TypeScript project with `exactOptionalPropertyTypes`
// (a flag `strict` leaves out, and many strict projects turn on) and `skipLibCheck: false` could not
// compile against the package: dist/src/core/interceptor.d.ts failed, `Class 'ContextFields'
// incorrectly implements interface 'RequestContext'` (its `mount`, typed `string | undefined`, for
// an optional `mount?: string`). Now the shipped declarations check under every strict-family flag.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NO_COVERAGE_ENV, REPO_ROOT } from '../helpers/gateway.js';

const run = promisify(execFile);

/** A consumer that touches each entry point's types: the interceptor's context included. */
const CONSUMER = `import http from 'node:http';
import Fastify from 'fastify';
import { createSwitchyard, deriveContext, hostIdentity, type Interceptor, type SwitchyardConfig } from 'switchyard';

const config: SwitchyardConfig = { upstreams: { fs: { command: 'node', args: ['server.js'] } } };
const audit: Interceptor = (next) => (ctx) => next(deriveContext(ctx, { params: { ...ctx.params } }));
const sy = createSwitchyard(config, { interceptors: [audit] });
const app = Fastify();
await app.register(sy.plugin, { identity: (request) => (request.headers['x-user'] ? hostIdentity('pat') : null) });
http.createServer((req, res) => void sy.handle(req, res, { identity: null }));
const res: Response = await sy.fetch(new Request('http://localhost/mcp'), { identity: hostIdentity('pat', { scopes: ['tools'] }) });
void res;
await sy.close();
`;

test('a strict consumer with exactOptionalPropertyTypes and skipLibCheck: false type-checks against the declarations', { timeout: 120_000 }, async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'switchyard-types-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, 'node_modules', '@types'), { recursive: true });
  // The package as it resolves for a user (package.json `exports` and `types`), the fastify the
  // consumer imports and the @types/node the declarations need; the rest is found from the package.
  await symlink(REPO_ROOT, path.join(dir, 'node_modules', 'switchyard'), 'dir');
  await symlink(path.join(REPO_ROOT, 'node_modules', 'fastify'), path.join(dir, 'node_modules', 'fastify'), 'dir');
  await symlink(path.join(REPO_ROOT, 'node_modules', '@types', 'node'), path.join(dir, 'node_modules', '@types', 'node'), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await writeFile(path.join(dir, 'index.ts'), CONSUMER);
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        noPropertyAccessFromIndexSignature: true,
        noImplicitOverride: true,
        noImplicitReturns: true,
        verbatimModuleSyntax: true,
        noEmit: true,
        types: ['node'],
        skipLibCheck: false,
      },
      include: ['index.ts'],
    }),
  );
  const tsc = await run(process.execPath, [path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: dir,
    env: { ...process.env, ...NO_COVERAGE_ENV },
  }).catch((err: { stdout: string }) => ({ stdout: err.stdout, failed: true }));
  // Errors in the declarations of fastify, pino and the rest are theirs, not ours.
  const ours = ('failed' in tsc ? tsc.stdout : '').split('\n').filter((line) => line !== '' && !/node_modules[\\/](?!switchyard)/.test(line.split('(')[0]));
  assert.deepEqual(ours, [], 'the consumer type-checks against the shipped declarations');
});
