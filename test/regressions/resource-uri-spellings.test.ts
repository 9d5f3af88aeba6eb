// A resource hidden by curation, or denied by a rule, was read through another spelling of its
// URI: server-everything (the official SDK) looks a resource up by `new URL(uri).href`, so
// `DEMO://…`, `…/./…`, `…/x/../…`, an empty port or a leading blank reached the hidden resource,
// while curation and policy decided on the text as sent. Found by trying to get around a policy
// as a low-rights user; now every spelling must be visible and allowed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { gatewayFromConfig, modernCall } from '../helpers/identity.js';

const require = createRequire(import.meta.url);
const ENTRY = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const HIDDEN = 'demo://resource/static/document/architecture.md';
const DENIED = 'demo://resource/static/document/features.md';
const SPELLINGS = (uri: string) => [
  uri.replace('demo://', 'DEMO://'),
  uri.replace('/document/', '/document/./'),
  uri.replace('/document/', '/x/../document/'),
  uri.replace('demo://resource/', 'demo://resource:/'),
];

test('a hidden or denied resource is not read through another spelling of its URI', async (t) => {
  const gw = await gatewayFromConfig(t, {
    upstreams: {
      ev: {
        command: process.execPath,
        args: [ENTRY, 'stdio'],
        resources: { exclude: [HIDDEN] },
        policy: { default: 'allow', rules: [{ name: 'no-features', effect: 'deny', when: `component.name == "${DENIED}"` }] },
      },
    },
    aggregate: {},
  });
  const [ev, agg] = gw.urls;
  let id = 1;
  const read = async (url: string, uri: string) => {
    const res = await modernCall(url, id++, 'resources/read', { uri });
    return res.json as { result?: unknown; error?: { code: number; message: string } };
  };
  // The plain URIs: refused, as before.
  assert.equal((await read(ev, HIDDEN)).error?.message, `Resource not found: ${HIDDEN}`);
  assert.equal((await read(ev, DENIED)).error?.code, -32010);
  // A visible, allowed resource is still read, also under another spelling.
  const ok = 'demo://resource/static/document/instructions.md';
  assert.ok((await read(ev, ok)).result, 'the plain URI');
  assert.ok((await read(ev, ok.replace('demo://', 'DEMO://'))).result, 'another spelling of an allowed URI');
  for (const uri of SPELLINGS(HIDDEN)) {
    const own = await read(ev, uri);
    assert.equal(own.result, undefined, `own mount, ${JSON.stringify(uri)}: ${JSON.stringify(own).slice(0, 120)}`);
    assert.equal(own.error?.message, `Resource not found: ${uri}`);
    const through = await read(agg, `switchyard://ev/${uri}`);
    assert.equal(through.result, undefined, `aggregate, ${JSON.stringify(uri)}`);
  }
  for (const uri of SPELLINGS(DENIED)) {
    const own = await read(ev, uri);
    assert.equal(own.result, undefined, `own mount, ${JSON.stringify(uri)}: ${JSON.stringify(own).slice(0, 120)}`);
    assert.equal(own.error?.code, -32010);
  }
});
