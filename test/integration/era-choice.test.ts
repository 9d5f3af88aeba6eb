// The era each upstream is spoken to in: `auto` prefers a dual-era server's 2025 sessions (its
// server requests work there), `match-client` serves each client in its own era, a revision pins
// it; a stdio child's era can be pinned, and `match-client` is refused for it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pino from 'pino';
import { SwitchyardError } from '../../src/core/errors.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { eraClients } from '../../src/gateway.js';
import type { HttpEra, HttpUpstream } from '../../src/upstreams/http/index.js';
import { createStdioUpstream, type StdioEra } from '../../src/upstreams/stdio/index.js';
import { connect } from '../helpers/clients.js';
import { REPO_ROOT, gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { conformanceHttp } from '../helpers/servers.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');

/** A 2026-07-28 client's raw `tools/call test_elicitation`, declaring elicitation. */
async function modernElicitation(url: string): Promise<{ inputRequests: Record<string, { method: string }>; requestState?: string; resultType: string }> {
  const r = await post(
    url,
    modernBody(1, 'tools/call', { name: 'test_elicitation', arguments: { message: 'Who?' } }, { elicitation: {} }),
    modernHeaders('tools/call', 'test_elicitation'),
  );
  assert.equal(r.status, 200, r.text);
  return (r.json as { result: { inputRequests: Record<string, { method: string }>; requestState?: string; resultType: string } }).result;
}

const ERAS: Array<{ era: HttpEra; spoken: string; modernKeys: (keys: string[]) => boolean; held: boolean }> = [
  // The 2025 session's push-style elicitation, held for the 2026 client by the gateway.
  { era: 'auto', spoken: '2025-11-25', modernKeys: (k) => k.length === 1 && /^input-\d+$/.test(k[0]), held: true },
  // The 2026 client reaches the server's own input_required round.
  { era: 'match-client', spoken: '2026-07-28+2025-11-25', modernKeys: (k) => k.length === 1 && k[0] === 'elicitation', held: false },
  { era: '2026-07-28', spoken: '2026-07-28', modernKeys: (k) => k.length === 1 && k[0] === 'elicitation', held: false },
];

for (const c of ERAS) {
  test(`a dual-era upstream with era ${c.era} is spoken to in ${c.spoken}`, async (t) => {
    const url = await conformanceHttp(t, 'both');
    // A short shutdown grace: where the gateway holds the round's call (auto), the teardown's
    // close would wait the default 5 s for a retry that never comes.
    const gw = await gateway(t, { upstreamUrl: url, upstreamEra: c.era, limits: { ...DEFAULT_LIMITS, shutdownGraceMs: 200 } });
    const up = gw.upstreams.get('default') as HttpUpstream;
    assert.equal(up.era, c.spoken);
    assert.equal(up.eraFor({ protocolVersion: '2026-07-28' }), c.era === 'auto' ? '2025-11-25' : '2026-07-28');
    assert.equal(up.eraFor({ protocolVersion: '2025-06-18' }), c.era === '2026-07-28' ? '2026-07-28' : '2025-11-25');

    const round = await modernElicitation(gw.url);
    assert.equal(round.resultType, 'input_required');
    assert.deepEqual(
      Object.values(round.inputRequests).map((r) => r.method),
      ['elicitation/create'],
    );
    assert.ok(c.modernKeys(Object.keys(round.inputRequests)), JSON.stringify(round));
    assert.equal(round.requestState?.startsWith('swy1.') ?? false, c.held);

    // A 2025 client: a real elicitation request either way (the server's own, or the gateway's shim).
    const client = await connect('v1-streamable', gw.url, { response: 'Ada' });
    t.after(() => client.close());
    const r = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } });
    assert.deepEqual(r.content, [{ type: 'text', text: 'User response: action=accept, content={"response":"Ada"}' }]);
    assert.equal(client.elicitations.length, 1);
  });
}

const eras = await eraClients();
const stdio = (era: StdioEra | 'match-client') =>
  createStdioUpstream({
    command: '',
    argv: [process.execPath, RAW, 'stdio'],
    log: pino({ level: 'silent' }),
    limits: { ...DEFAULT_LIMITS, upstreamStartTimeoutMs: 5_000 },
    clientInfo: { name: 'switchyard', version: 'test' },
    eras,
    era,
  });

test('a stdio child’s era can be pinned; a pinned era it does not speak fails the start with its answer', async (t) => {
  const old = stdio('2024-11-05');
  t.after(() => old.close());
  await old.start();
  assert.equal(old.describe().upstreamRevision, '2024-11-05');
  // The child counter-offers its own revision to 2025-06-18 (basic/lifecycle#version-negotiation).
  const newer = stdio('2025-06-18');
  t.after(() => newer.close());
  await newer.start();
  assert.equal(newer.describe().upstreamRevision, '2025-11-25');
  const modern = stdio('2026-07-28');
  t.after(() => modern.close());
  // The client's message names the error's code; the operator's quotes the child's answer whole.
  await assert.rejects(modern.start(), (err: unknown) => {
    assert.ok(err instanceof SwitchyardError);
    assert.deepEqual(
      [err.code, err.message, err.operatorMessage],
      [
        'SWY_ERR_UPSTREAM_UNAVAILABLE',
        'Upstream unavailable: the child does not speak 2026-07-28: server/discover answered JSON-RPC error -32601',
        'Upstream unavailable: the child does not speak 2026-07-28: server/discover answered {"code":-32601,"message":"Method not found"}',
      ],
    );
    return true;
  });
  assert.throws(() => stdio('match-client'), {
    code: 'SWY_ERR_CONFIG_INVALID',
    message: `Invalid configuration: upstream stdio:${process.execPath}: era match-client needs an HTTP upstream; a stdio child is one connection in one era`,
  });
});

test('the gateway’s upstreamEra (the --upstream-era flag) pins a --stdio child too', async (t) => {
  const gw = await gateway(t, { stdio: `"${process.execPath}" "${RAW}" stdio`, upstreamEra: '2024-11-05' });
  assert.equal(gw.upstream.describe().upstreamRevision, '2024-11-05');
});
