// docs/errors.md has exactly one row per catalogue code, with the catalogue's status, code and fault.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Catalogue } from '../../src/core/errors.js';
import { REPO_ROOT } from '../helpers/gateway.js';

test('docs/errors.md lists every catalogue entry with its status, JSON-RPC code and fault', () => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/errors.md'), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of doc.split('\n')) {
    const m = /^\| `(SWY_ERR_[A-Z0-9_]+)` \|(.*)\|$/.exec(line);
    if (m) {
      assert.ok(!rows.has(m[1]), `${m[1]} appears twice`);
      rows.set(
        m[1],
        m[2].split(' | ').map((c) => c.trim()),
      );
    }
  }
  assert.deepEqual([...rows.keys()].sort(), Object.keys(Catalogue).sort());
  for (const [code, e] of Object.entries(Catalogue)) {
    const cells = rows.get(code)!;
    if (e.wire) {
      assert.equal(cells[0], String(e.status), `${code} status`);
      assert.equal(cells[1], String(e.rpc), `${code} JSON-RPC code`);
      assert.equal(cells[2], e.fault, `${code} fault`);
      assert.equal(cells[3], e.message.replace(/\|/g, '\\|'), `${code} message`);
    } else {
      assert.equal(cells[0], e.fault, `${code} fault`);
    }
  }
});

test('catalogue codes follow SWY_ERR_<AREA>_<WHAT> and messages are unique', () => {
  const seen = new Set<string>();
  for (const [code, e] of Object.entries(Catalogue)) {
    assert.match(code, /^SWY_ERR_[A-Z]+_[A-Z0-9_]+$/);
    assert.ok(!seen.has(e.message), `duplicate message ${e.message}`);
    seen.add(e.message);
  }
});
