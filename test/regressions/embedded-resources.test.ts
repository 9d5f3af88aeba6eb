// A resource that curation hides, or that a rule denies a caller, reached that caller inside a
// result: a tool's embedded `resource` block (its whole text or blob), a `resource_link` block, a
// prompt message's embedded resource, or a read's contents naming other resources than the one
// read. Policy and curation decided resources/read and resources/list only, and passed results
// as the upstream wrote them. Found by reading where resource decisions are made and what else
// carries a URI. Now every such resource is decided as a read of its URI for the caller: a block
// becomes a text note, a read's other item is dropped. The upstreams are real: server-everything
// (its get-resource-reference, get-resource-links, resource-prompt) and a stdio fixture whose read
// returns three contents.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import * as v2 from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Streamable } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport as V1SSE } from '@modelcontextprotocol/sdk/client/sse.js';
import { hashApiKey } from '../../src/auth/index.js';
import { WITHHELD_RESOURCE_TEXT } from '../../src/policy/index.js';
import { fetch2024 } from '../helpers/clients.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { post } from '../helpers/http.js';
import { everythingUpstream, gatewayFromConfig, modernCall, openSession, sessionHeaders } from '../helpers/identity.js';
import { schemaOf } from '../helpers/schemas.js';

const ALICE = 'swy-test-alice-0123456789abcdef';
const BOB = 'swy-test-bob-0123456789abcdef012';
const TEXT = (id: number) => `demo://resource/dynamic/text/${id}`;
const BLOB = (id: number) => `demo://resource/dynamic/blob/${id}`;
const NOTE = { type: 'text', text: WITHHELD_RESOURCE_TEXT };
// server-everything's text resources say this; a withheld one's text must not reach the caller.
const TEXT_BODY = 'This is a plaintext resource';

type Block = { type: string; text?: string; uri?: string; resource?: { uri: string; text?: string; blob?: string } };
interface Caller {
  callTool(name: string, args: Record<string, unknown>): Promise<{ content: Block[] }>;
  getPrompt(name: string, args: Record<string, string>): Promise<{ messages: Array<{ role: string; content: Block }> }>;
  close(): Promise<void>;
}

type Kind = 'v2-2026' | 'v1-streamable' | 'v1-sse-2024';

/** An official client of `kind` sending `Authorization: Bearer <key>`. */
async function connectAs(kind: Kind, url: string, key: string): Promise<Caller> {
  const headers = { authorization: `Bearer ${key}` };
  const u = new URL(url);
  if (kind === 'v2-2026') {
    const client = new v2.Client({ name: 'embedded-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new v2.StreamableHTTPClientTransport(u, { requestInit: { headers } }));
    return {
      callTool: async (name, args) => await client.callTool({ name, arguments: args }),
      getPrompt: async (name, args) => await client.getPrompt({ name, arguments: args }),
      close: () => client.close(),
    };
  }
  const client = new V1Client({ name: `embedded-${kind}`, version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    kind === 'v1-sse-2024' ? new V1SSE(u, { fetch: fetch2024, requestInit: { headers } }) : new V1Streamable(u, { requestInit: { headers } }),
  );
  return {
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as never,
    getPrompt: async (name, args) => await client.getPrompt({ name, arguments: args }),
    close: () => client.close(),
  };
}

/**
 * What a block shows: `note` for the withheld note, the URI of a resource link (for a 2024-11-05
 * client, the text block a link is rewritten to names it in angle brackets), `text` otherwise.
 */
function shown(b: Block): string {
  if (b.type === 'text' && b.text === WITHHELD_RESOURCE_TEXT) return 'note';
  if (b.type === 'resource_link') return b.uri!;
  if (b.type === 'resource') return `resource ${b.resource!.uri}`;
  const link = b.type === 'text' ? /^Resource link: .* <([^>]+)>/.exec(b.text ?? '') : null;
  return link ? link[1] : 'text';
}

test('embedded resources and resource links reach a caller only when it may read them, in every era', async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: {
      apiKeys: [
        { name: 'alice', sha256: hashApiKey(ALICE) },
        { name: 'bob', sha256: hashApiKey(BOB) },
      ],
    },
    dialects: { legacySse: true },
    policy: {
      default: 'allow',
      rules: [
        {
          name: 'no-text-for-bob',
          effect: 'deny',
          when: `principal.sub == "bob" && component.kind == "resource" && component.name.startsWith("demo://resource/dynamic/text/")`,
        },
      ],
    },
    upstreams: { ev: everythingUpstream({ resources: { exclude: [BLOB(1)] } }) },
    aggregate: {},
  });
  const [own, agg] = gw.urls;
  for (const kind of ['v2-2026', 'v1-streamable', 'v1-sse-2024'] as const) {
    const alice = await connectAs(kind, own, ALICE);
    const bob = await connectAs(kind, own, BOB);
    try {
      // An embedded text resource: alice may read it, bob may not.
      const forAlice = await alice.callTool('get-resource-reference', { resourceType: 'Text', resourceId: 1 });
      assert.deepEqual(forAlice.content.map(shown), ['text', `resource ${TEXT(1)}`, 'text'], kind);
      assert.match(forAlice.content[1].resource!.text!, /^Resource 1: This is a plaintext resource/);
      const forBob = await bob.callTool('get-resource-reference', { resourceType: 'Text', resourceId: 1 });
      assert.deepEqual(forBob.content[1], NOTE, kind);
      assert.deepEqual(forBob.content[0], forAlice.content[0], 'the blocks around it are kept');
      assert.ok(!JSON.stringify(forBob).includes(TEXT_BODY), `${kind}: ${JSON.stringify(forBob)}`);
      // A hidden blob is withheld from both; a visible one reaches both.
      for (const c of [alice, bob]) {
        const hidden = await c.callTool('get-resource-reference', { resourceType: 'Blob', resourceId: 1 });
        assert.deepEqual(hidden.content[1], NOTE, kind);
        const visible = await c.callTool('get-resource-reference', { resourceType: 'Blob', resourceId: 3 });
        assert.equal(visible.content[1].resource?.uri, BLOB(3), kind);
        assert.equal(typeof visible.content[1].resource?.blob, 'string');
      }
      // Resource links: 1 and 3 are blobs, 2 and 4 text.
      const links = async (c: Caller) => (await c.callTool('get-resource-links', { count: 4 })).content.map(shown);
      assert.deepEqual(await links(alice), ['text', 'note', TEXT(2), BLOB(3), TEXT(4)], kind);
      assert.deepEqual(await links(bob), ['text', 'note', 'note', BLOB(3), 'note'], kind);
      // A prompt message's embedded resource: the message keeps its role and place.
      const prompt = async (c: Caller) => (await c.getPrompt('resource-prompt', { resourceType: 'Text', resourceId: '2' })).messages;
      const toAlice = await prompt(alice);
      assert.equal(toAlice[1].content.resource?.uri, TEXT(2), kind);
      const toBob = await prompt(bob);
      assert.deepEqual(toBob[1], { role: 'user', content: NOTE }, kind);
      assert.deepEqual(toBob[0], toAlice[0]);
      assert.ok(!JSON.stringify(toBob).includes(TEXT_BODY), kind);
    } finally {
      await alice.close();
      await bob.close();
    }
  }
  // Through the aggregate mount: decided on the member's own URI, delivered in aggregate form.
  const bob = await connectAs('v2-2026', agg, BOB);
  const alice = await connectAs('v2-2026', agg, ALICE);
  t.after(() => Promise.all([bob.close(), alice.close()]));
  const links = async (c: Caller) => (await c.callTool('ev__get-resource-links', { count: 4 })).content.map(shown);
  assert.deepEqual(await links(bob), ['text', 'note', 'note', `switchyard://ev/${BLOB(3)}`, 'note']);
  assert.deepEqual(await links(alice), ['text', 'note', `switchyard://ev/${TEXT(2)}`, `switchyard://ev/${BLOB(3)}`, `switchyard://ev/${TEXT(4)}`]);
  const embedded = await bob.callTool('ev__get-resource-reference', { resourceType: 'Text', resourceId: 1 });
  assert.deepEqual(embedded.content[1], NOTE);
});

test('a withheld block leaves a result valid against the revision schema the client speaks', async (t) => {
  const gw = await gatewayFromConfig(t, {
    upstreams: { ev: everythingUpstream({ resources: { exclude: ['demo://resource/dynamic/**'] } }) },
  });
  const url = gw.urls[0];
  // 2026-07-28, stateless.
  const modern = await modernCall(url, 1, 'tools/call', { name: 'get-resource-links', arguments: { count: 2 } });
  const r2026 = (modern.json as { result: { content: Block[] } }).result;
  assert.deepEqual(r2026.content.map(shown), ['text', 'note', 'note']);
  schemaOf('2026-07-28')('CallToolResult', r2026);
  // A 2025-03-26 session: the prompt's message carries the note.
  const sid = await openSession(url);
  const got = await post(
    url,
    { jsonrpc: '2.0', id: 2, method: 'prompts/get', params: { name: 'resource-prompt', arguments: { resourceType: 'Blob', resourceId: '1' } } },
    sessionHeaders(sid),
  );
  const r2025 = (got.json as { result: { messages: Array<{ content: Block }> } }).result;
  assert.deepEqual(r2025.messages[1].content, NOTE);
  schemaOf('2025-03-26')('GetPromptResult', r2025);
});

test("a read's contents naming other resources: hidden or denied ones are dropped, the one read and allowed ones kept", async (t) => {
  const gw = await gatewayFromConfig(t, {
    auth: {
      apiKeys: [
        { name: 'alice', sha256: hashApiKey(ALICE) },
        { name: 'bob', sha256: hashApiKey(BOB) },
      ],
    },
    policy: {
      default: 'allow',
      rules: [{ name: 'no-public-for-bob', effect: 'deny', when: `principal.sub == "bob" && component.name == "bundle://dir/public"` }],
    },
    upstreams: {
      bundle: {
        command: process.execPath,
        args: [path.join(REPO_ROOT, 'test/fixtures/resource-bundle-server.mjs')],
        resources: { exclude: ['bundle://dir/secret'] },
      },
    },
  });
  const url = gw.urls[0];
  const uris = async (key: string, id: number) => {
    const res = await modernCall(url, id, 'resources/read', { uri: 'bundle://dir' }, `Bearer ${key}`);
    const result = (res.json as { result: { contents: Array<{ uri: string; text: string }>; cacheScope: string } }).result;
    assert.ok(!JSON.stringify(result).includes('the secret part'));
    return result.contents.map((c) => c.uri);
  };
  assert.deepEqual(await uris(ALICE, 1), ['bundle://dir', 'bundle://dir/public']);
  assert.deepEqual(await uris(BOB, 2), ['bundle://dir']);
  // A 2025 session gets the same.
  const sid = await openSession(url, `Bearer ${BOB}`);
  const got = await post(url, { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'bundle://dir' } }, sessionHeaders(sid, `Bearer ${BOB}`));
  assert.deepEqual(got.json, { jsonrpc: '2.0', id: 3, result: { contents: [{ uri: 'bundle://dir', mimeType: 'text/plain', text: 'the index' }] } });
});
