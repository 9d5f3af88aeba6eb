// Found by a trial as a new user embedding Switchyard: a TypeScript project on `module: Node16`
// (what @tsconfig/node20 sets, and the setting TypeScript documents for Node packages) with
// `skipLibCheck: false` could not compile against the package. Four shipped declarations
// (dist/src/config/load.d.ts, dist/src/auth/config.d.ts, dist/src/policy/config.d.ts) typed the
// exported schema constants as `typeof import('./schema.json', …)`, which needs the consumer's
// `resolveJsonModule`: `error TS2732: Cannot find module './schema.json'. Consider using
// '--resolveJsonModule' …`. NodeNext and bundler resolution turn that flag on by default, Node16
// does not. Now no declaration imports a JSON module.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { typecheckConsumer } from '../helpers/consumer-types.js';
import { REPO_ROOT } from '../helpers/gateway.js';

/** A consumer that uses the library's config type and each entry point. */
const CONSUMER = `import { createSwitchyard, hostIdentity, type SwitchyardConfig } from 'switchyard';

const config: SwitchyardConfig = { upstreams: { fs: { command: 'node', args: ['server.js'] } }, cluster: { redis: 'redis://127.0.0.1:6379', key: 'k' } };
const sy = createSwitchyard(config);
const res: Response = await sy.fetch(new Request('http://localhost/mcp'), { identity: hostIdentity('pat') });
void res;
await sy.close();
`;

/** Every `.d.ts` under `dir`, recursively. */
async function declarations(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await declarations(p)));
    else if (e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

test('a consumer on module Node16 (no resolveJsonModule) with skipLibCheck: false type-checks against the declarations', { timeout: 120_000 }, async (t) => {
  const ours = await typecheckConsumer(t, {
    source: CONSUMER,
    compilerOptions: { target: 'ES2022', module: 'Node16', moduleResolution: 'Node16', strict: true, skipLibCheck: false },
  });
  assert.deepEqual(ours, [], 'the consumer type-checks against the shipped declarations');
});

test('no shipped declaration imports a JSON module', async () => {
  const found: string[] = [];
  for (const root of ['dist/src', 'dist/dialects'])
    for (const file of await declarations(path.join(REPO_ROOT, root)))
      if (/import\(\s*['"][^'"]+\.json['"]|from\s+['"][^'"]+\.json['"]/.test(await readFile(file, 'utf8'))) found.push(path.relative(REPO_ROOT, file));
  assert.deepEqual(found, []);
});
