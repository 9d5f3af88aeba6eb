// Regression (found by a trial, h-trial5): a mount path with a `.` or `..` segment
// (`path: /a/../b`, `--path /x/./mcp`, `aggregate.path: /%2e/mcp`) passed `switchyard validate`
// and the start, which printed `listening on http://127.0.0.1:PORT/a/../b`; but every client
// resolves dot segments before it sends a request (WHATWG URL, so the official SDK; curl; RFC 3986
// §5.2.4), `%2e` included, and asked for `/b`: 404, a mount that no client could reach. Such a
// path is now a config error, named with its place, as `publicBaseUrl`'s path has long been.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { validateConfig } from '../../src/config/load.js';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 20_000, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number | null }).code ?? null) : 0, stdout, stderr });
    });
  });
}

test('switchyard validate refuses a mount path with a . or .. segment (clients resolve them away: the mount would be unreachable)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swy-dots-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'dots.yaml');
  writeFileSync(
    file,
    [
      'listen: { path: /gw/. }',
      'upstreams:',
      '  a: { transport: embedded, path: /a/../b }',
      '  c: { transport: embedded, path: /c/%2E%2e/mcp }',
      '  ok: { transport: embedded, path: /x.y/..z/.well-known/mcp }',
      'aggregate: { path: /./mcp }',
    ].join('\n'),
  );
  const r = await run(['validate', file]);
  assert.equal(r.code, 1, r.stdout);
  const paths = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('  /'))
    .map((l) => l.trim().split(':')[0]);
  assert.deepEqual(paths.sort(), ['/aggregate/path', '/listen/path', '/upstreams/a/path', '/upstreams/c/path']);
  assert.match(r.stdout, /\/upstreams\/a\/path: must be a path like \/a\/mcp \(.*no \. or \.\. segment/);
});

test('--path with a dot segment is refused at start, not served where no client can reach it', async () => {
  const r = await run(['--path', '/x/../mcp', '--port', '0', '--no-admin']);
  assert.notEqual(r.code, 0);
  assert.doesNotMatch(r.stderr, /listening on/);
  assert.match(r.stderr, /\/upstreams\/default\/path: must be a path like/);
});

test('a config object with a dot-segment path is refused by validateConfig too (createSwitchyard)', () => {
  assert.throws(
    () => validateConfig({ upstreams: { a: { transport: 'embedded', path: '/a/./mcp' } } }, 'test', { env: {} }),
    (err: { data?: { errors?: Array<{ path: string }> } }) => err.data?.errors?.[0]?.path === '/upstreams/a/path',
  );
});
