// withheldResources: which blocks and contents are decided, what a refused one becomes, that a
// result with nothing to withhold comes back as the same object, and that what comes out is
// valid against every revision's schema.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JsonObject } from '../../src/core/message.js';
import { WITHHELD_RESOURCE_TEXT, withheldResources, type CarrierRequest } from '../../src/policy/index.js';
import { schemaOf } from '../helpers/schemas.js';

const NOTE = { type: 'text', text: WITHHELD_RESOURCE_TEXT };
const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
const call: CarrierRequest = { method: 'tools/call', params: { name: 't' } };
const prompt: CarrierRequest = { method: 'prompts/get', params: { name: 'p' } };
const read = (uri: string): CarrierRequest => ({ method: 'resources/read', params: { uri } });
const onlyPublic = (uri: string) => uri.startsWith('x://public/');

const embedded = (uri: string) => ({ type: 'resource', resource: { uri, mimeType: 'text/plain', text: `contents of ${uri}` } });
const link = (uri: string) => ({ type: 'resource_link', uri, name: uri, description: `about ${uri}` });
const text = (s: string) => ({ type: 'text', text: s });

test('tools/call: refused embedded resources and links become the note in their place; the rest is kept as it came', () => {
  const result = { content: [text('a'), embedded('x://secret/1'), link('x://public/2'), link('x://secret/3'), embedded('x://public/4')], isError: false };
  const seen: string[] = [];
  const out = withheldResources(call, result, (uri, ctx) => {
    assert.equal(ctx, call);
    seen.push(uri);
    return onlyPublic(uri);
  });
  assert.deepEqual(seen, ['x://secret/1', 'x://public/2', 'x://secret/3', 'x://public/4']);
  assert.deepEqual(out, { content: [text('a'), NOTE, link('x://public/2'), NOTE, embedded('x://public/4')], isError: false });
  assert.equal((out.content as unknown[])[2], result.content[2], 'kept blocks are the same objects');
  assert.equal(result.content[1].type, 'resource', 'the input is not mutated');
});

test('prompts/get: a message whose resource is refused keeps its role and place, with the note as content', () => {
  const result = {
    description: 'd',
    messages: [
      { role: 'user', content: text('look:') },
      { role: 'user', content: embedded('x://secret/1') },
      { role: 'assistant', content: link('x://public/2') },
    ],
  };
  assert.deepEqual(withheldResources(prompt, result, onlyPublic), {
    description: 'd',
    messages: [result.messages[0], { role: 'user', content: NOTE }, result.messages[2]],
  });
});

test('resources/read: contents naming other resources are decided and dropped when refused; the one read is not decided again', () => {
  const contents = [{ uri: 'x://secret/dir', text: 'index' }, { uri: 'x://public/a', text: 'a' }, { uri: 'x://secret/b', blob: 'Yg==' }, { text: 'no uri' }];
  const seen: string[] = [];
  const out = withheldResources(read('x://secret/dir'), { contents }, (uri) => (seen.push(uri), onlyPublic(uri)));
  assert.deepEqual(out, { contents: [contents[0], contents[1]] });
  assert.deepEqual(seen, ['x://public/a', 'x://secret/b'], 'the URI read was decided before the read');
});

test('a block that names no string URI is withheld (nothing to decide on)', () => {
  const odd = [
    { type: 'resource_link', name: 'n' },
    { type: 'resource', resource: null },
    { type: 'resource', resource: { uri: 7, text: 'x' } },
  ];
  const out = withheldResources(call, { content: odd }, () => true);
  assert.deepEqual(out, { content: [NOTE, NOTE, NOTE] });
});

test('nothing to withhold: the same result object, arrays and blocks, and no decision for other blocks', () => {
  const never = () => assert.fail('no resource to decide');
  const results: Array<[CarrierRequest, JsonObject]> = [
    [call, { content: [text('a'), { type: 'image', data: 'AA==', mimeType: 'image/png' }], structuredContent: { uri: 'x://secret/1' } }],
    [call, { content: 'not a list' }],
    [call, { resultType: 'input_required', inputRequests: {} }],
    [prompt, { messages: [{ role: 'user', content: text('a') }, null, 'x'] }],
    [read('x://secret/1'), { contents: [{ uri: 'x://secret/1', text: 's' }] }],
    [
      { method: 'completion/complete', params: {} },
      { completion: { values: [] }, content: [embedded('x://secret/1')] },
    ],
    [
      { method: 'tools/list', params: {} },
      { tools: [], content: [link('x://secret/1')] },
    ],
  ];
  for (const [ctx, result] of results) {
    const copy = structuredClone(result);
    const out = withheldResources(ctx, result, never);
    assert.equal(out, result, JSON.stringify(result));
    assert.deepEqual(result, copy);
  }
  const allowed = { content: [embedded('x://public/1'), link('x://public/2')] };
  assert.equal(withheldResources(call, allowed, onlyPublic), allowed);
});

test("results with withheld blocks are valid in every revision's schema", () => {
  for (const rev of REVISIONS) {
    const check = schemaOf(rev);
    // resource_link exists from 2025-06-18 on; the gateway rewrites it for older clients anyway.
    const blocks = rev >= '2025-06-18' ? [embedded('x://secret/1'), link('x://secret/2'), link('x://public/3')] : [embedded('x://secret/1')];
    const extra = rev === '2026-07-28' ? { resultType: 'complete' } : {};
    check('CallToolResult', { ...withheldResources(call, { content: blocks }, onlyPublic), ...extra });
    check('GetPromptResult', { ...withheldResources(prompt, { messages: [{ role: 'user', content: embedded('x://secret/1') }] }, onlyPublic), ...extra });
    const readOut = withheldResources(
      read('x://public/d'),
      {
        contents: [
          { uri: 'x://public/d', text: 'd' },
          { uri: 'x://secret/e', text: 'e' },
        ],
      },
      onlyPublic,
    );
    check('ReadResourceResult', rev === '2026-07-28' ? { ...readOut, ...extra, ttlMs: 0, cacheScope: 'private' } : readOut);
  }
});

test('property: a tools/call result keeps its length and order, and no refused URI is left in it', () => {
  const uri = fc.constantFrom('x://public/1', 'x://public/2', 'x://secret/1', 'x://secret/2');
  const block = fc.oneof(fc.string().map(text), uri.map(embedded), uri.map(link), fc.constant({ type: 'image', data: 'AA==', mimeType: 'image/png' }));
  fc.assert(
    fc.property(fc.array(block, { maxLength: 12 }), (content) => {
      const out = withheldResources(call, { content }, onlyPublic).content as JsonObject[];
      assert.equal(out.length, content.length);
      content.forEach((b: JsonObject, i) => {
        const refused = (b.type === 'resource' || b.type === 'resource_link') && !JSON.stringify(b).includes('x://public/');
        assert.deepEqual(out[i], refused ? NOTE : b);
      });
      assert.ok(!JSON.stringify(out).includes('x://secret/'));
    }),
  );
});
