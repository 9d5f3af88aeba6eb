// The upstream connectors are framing and I/O: era vocabulary reaches them only through the
// injected era clients (docs/upstreams.md), so no `io.modelcontextprotocol/` key is written there,
// and no timeout or backoff is a literal outside Limits.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const sources = [...files(path.join(REPO_ROOT, 'src/upstreams')), ...files(path.join(REPO_ROOT, 'src/io'))].filter(
  (f) => !f.includes(`${path.sep}demo${path.sep}`),
);

/** `file:line` of every line of the upstream layer matching `re`. */
function hits(re: RegExp): string[] {
  const out: string[] = [];
  for (const f of sources)
    readFileSync(f, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (re.test(line)) out.push(`${path.relative(REPO_ROOT, f)}:${i + 1}`);
      });
  return out;
}

test('no io.modelcontextprotocol/ key is written in src/upstreams or src/io', () => {
  assert.deepEqual(hits(/io\.modelcontextprotocol\//), []);
});

test('no timeout or backoff of the upstream layer is a literal: setTimeout and timeout options take Limits', () => {
  assert.deepEqual(hits(/(setTimeout|sleep|AbortSignal\.timeout)\([^)]*\b\d[\d_]{2,}|[Tt]imeout(Ms)?:\s*\d[\d_]{2,}/), []);
});
