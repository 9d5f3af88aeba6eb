// Found by a trial (2026-12-05): a reload whose file had a policy rule that does not compile
// (CEL is compiled when the gateway assembles, after the loader's checks) was logged as one
// `config reload failed` error with a stack trace, not as docs/operations.md says every invalid
// config is: one `config reload refused` line per failing place (`path`, `problem`), then the
// summary with the count.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refusedReload, startOpsCli } from '../helpers/ops-cli.js';
import { configFile } from '../helpers/ops.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

test('SIGHUP with a policy rule that does not compile: one `config reload refused` line per failing rule, and the running policy stays', async (t) => {
  const policy = (when: string, also?: string) => ({
    default: 'allow',
    rules: [{ name: 'no-add', effect: 'deny', when }, ...(also ? [{ name: 'broken-too', effect: 'deny', when: also }] : [])],
  });
  const config = (p: unknown) => ({ listen: { port: 0 }, admin: false, upstreams: { demo: { transport: 'embedded', policy: p } } });
  const file = configFile(t, config(policy("component.name == 'add'")));
  const cli = await startOpsCli(t, ['--config', file, '--no-admin']);

  const { summary, refused } = await refusedReload(cli, file, config(policy("principal.subject == 'bob'", 'component.name ==')));
  assert.deepEqual(
    refused.map((r) => r.path),
    ['/upstreams/demo/policy/rules/0/when', '/upstreams/demo/policy/rules/1/when'],
  );
  assert.match(String(refused[0]?.problem), /^No such key: subject/);
  assert.equal(summary.errors, 2);
  assert.equal(summary.err, undefined);

  // The running policy still denies `add`.
  const res = await post(cli.url, modernBody(1, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }), modernHeaders('tools/call', 'add'));
  assert.equal((res.json as { error?: { code: number } }).error?.code, -32010);
});
