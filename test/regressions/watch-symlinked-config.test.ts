// Found by a fresh-operator trial of `--watch` (docs/operations.md, "Hot reload"): with a config
// path that is a symlink to a file in another directory (a dotfiles checkout, a config kept in a
// mounted repository), editing the file itself reloaded nothing: only the directory of the path
// given was watched, and no event there names an edit of the target. SIGHUP still reloaded. The
// directory the path resolves to is now watched as well (and followed when the link is pointed
// elsewhere).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startOpsCli } from '../helpers/ops-cli.js';

/** `p`, or a rejection after `ms` (the helper's waitFor waits for ever). */
const within = <T>(p: Promise<T>, ms = 5_000): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no reload within ${ms} ms`)), ms).unref())]);

const config = { listen: { port: 0 }, admin: false, upstreams: { demo: { transport: 'embedded' } } };

test('--watch reloads when the target of a symlinked config path is edited in place, or replaced, in its own directory', async (t) => {
  const root = mkdtempSync(path.join(tmpdir(), 'swy-watch-link-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(path.join(root, 'real'));
  mkdirSync(path.join(root, 'etc'));
  const real = path.join(root, 'real', 'config.json');
  writeFileSync(real, JSON.stringify(config));
  symlinkSync(real, path.join(root, 'etc', 'config.json'));
  const cli = await startOpsCli(t, ['--config', path.join(root, 'etc', 'config.json'), '--watch', '--no-admin']);

  let from = cli.records.length;
  writeFileSync(real, JSON.stringify({ ...config, upstreams: { ...config.upstreams, more: { transport: 'embedded' } } }));
  let done = await within(cli.waitFor((r) => r.msg === 'config reloaded', from));
  assert.deepEqual([done.added, done.removed, done.changed], [['more'], [], []]);

  // An editor's save: a new file renamed over the target.
  from = cli.records.length;
  const tmp = path.join(root, 'real', '.config.json.swp');
  writeFileSync(tmp, JSON.stringify(config));
  renameSync(tmp, real);
  done = await within(cli.waitFor((r) => r.msg === 'config reloaded', from));
  assert.deepEqual([done.added, done.removed, done.changed], [[], ['more'], []]);
});
