// docs/config.md's Flags table has a row for every option `switchyard --help` lists: seven
// (--config, --upstream, --upstream-era, --isolation, --upstream-header, --strict, --serve-stdio)
// had none, and --isolation was described nowhere in the docs (found by h-docs).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';

test('every long option of `switchyard --help` has a row in the Flags table of docs/config.md', () => {
  const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(help.status, 0, help.stderr);
  const options = help.stdout.slice(help.stdout.indexOf('Options:'), help.stdout.indexOf('Commands:'));
  const flags = new Set([...options.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]));
  for (const f of ['--help', '--version']) flags.delete(f);
  assert.ok(flags.size > 20, [...flags].join(' '));
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/config.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Flags'), doc.indexOf('## Limits'));
  // The flags a row names in its first cell (a flag another row mentions does not count).
  const firstCells = table.split('\n').flatMap((line) => (line.startsWith('| `') ? [line.split(' | ')[0]] : []));
  const rows = new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`(--[a-z-]+)[ `]/g)].map((m) => m[1])));
  assert.deepEqual(
    [...flags].filter((f) => !rows.has(f)),
    [],
  );
});
