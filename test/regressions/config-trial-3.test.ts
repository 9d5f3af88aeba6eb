// Config input found by a third new-user trial and by a closing note: a YAML alias cycle (and a
// JSON document nested 20,000 deep) overflowed the stack and printed "Maximum call stack size
// exceeded"; numeric strings were coerced with Number() (`"0x10"` became 16); and `trustProxy`
// entries such as `999.1.2.3` or `1.2.3.4/99` passed `validate` and then failed the start.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CONFIG_DEPTH, parseConfigText, validateConfig } from '../../src/config/load.js';
import { validateFile } from '../helpers/cli.js';
import { configIssuesOf } from '../helpers/config.js';

const issuesOf = configIssuesOf;

test('a YAML alias inside the node it names is refused as a cycle, by validate and by the loader; a shared alias still works', async (t) => {
  const cyc = await validateFile(t, 'c.yaml', 'upstreams: &a\n  a: *a\n');
  assert.equal(cyc.code, 1);
  assert.equal(cyc.stdout, `${cyc.file}: invalid config, 1 error\n  (file): not valid YAML: an alias refers to a node that contains it (a cycle)\n`);
  const fan = await validateFile(t, 'f.yaml', 'a: &a [1, 2]\nb: &b [*a, *a]\nc: &c [*b, *c]\nupstreams: { u: { url: "http://127.0.0.1:1/mcp" } }\n');
  assert.equal(fan.code, 1);
  assert.match(fan.stdout, /not valid YAML: an alias refers to a node that contains it \(a cycle\)/);
  const shared = await validateFile(t, 's.yaml', 'upstreams:\n  a: &h\n    url: http://127.0.0.1:1/mcp\n  b: *h\n');
  assert.deepEqual([shared.code, shared.stdout], [0, 'ok: 2 upstreams\n']);
});

test(`a document nested deeper than ${MAX_CONFIG_DEPTH} levels is refused before anything walks it (JSON, YAML, an embedder's object)`, async (t) => {
  const deep = await validateFile(t, 'd.json', `{"x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`);
  assert.equal(deep.code, 1);
  assert.equal(deep.stdout, `${deep.file}: invalid config, 1 error\n  (file): not valid JSON: nested deeper than ${MAX_CONFIG_DEPTH} levels\n`);
  assert.throws(() => parseConfigText(`x: ${'['.repeat(100)}${']'.repeat(100)}\n`, 'd.yaml'), /not valid YAML: nested deeper than 64 levels/);
  const cyclic: Record<string, unknown> = { upstreams: {} };
  (cyclic.upstreams as Record<string, unknown>).self = cyclic;
  assert.deepEqual(issuesOf(cyclic), [{ path: '', message: 'an alias refers to a node that contains it (a cycle)' }]);
  // 63 levels under the root pass the structure check (and fail, as before, on the schema).
  let nested: unknown = 1;
  for (let i = 0; i < MAX_CONFIG_DEPTH - 1; i++) nested = [nested];
  assert.ok(issuesOf({ x: nested }).every((i) => i.path === '/x'));
});

test('numbers given as text must be written as JSON writes numbers: "10", "1e3" are taken; "0x10", " 10", "0b11" are refused at their path', () => {
  const limits = (v: string) => ({ upstreams: { u: { url: 'http://127.0.0.1:1/mcp' } }, limits: { maxBodyBytes: v } });
  assert.deepEqual(issuesOf(limits('10')), []);
  assert.deepEqual(issuesOf(limits('1e3')), []);
  for (const v of ['0x10', ' 10', '10 ', '0b11', '0o17', '+10'])
    assert.deepEqual(issuesOf(limits(v)), [{ path: '/limits/maxBodyBytes', message: 'must be a number written in decimal (e.g. 10, 1.5, 1e6)' }], v);
  assert.equal(validateConfig(limits('4096'), 'test', { env: {} }).limits.maxBodyBytes, 4096);
});

test('trustProxy entries are addresses and CIDRs proxy-addr takes: validate refuses what the start would refuse', () => {
  const MESSAGE = 'must be an IPv4 or IPv6 address, a CIDR with a prefix length in range (10.0.0.0/8, fd00::/8), or loopback, linklocal, uniquelocal';
  for (const ok of ['loopback', 'linklocal', 'uniquelocal', '10.0.0.0/8', '192.0.2.1', '::1', 'fd00::/8', '2001:db8::/128', '0.0.0.0/0'])
    assert.deepEqual(issuesOf({ trustProxy: [ok] }), [], ok);
  for (const bad of ['999.1.2.3', '1.2.3.4/99', ':::::', '::1/129', '10.0.0.0/08', '10.0.0.0/', '1.2.3'])
    assert.deepEqual(issuesOf({ trustProxy: ['loopback', bad] }), [{ path: '/trustProxy/1', message: MESSAGE }], bad);
});
