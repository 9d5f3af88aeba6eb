// RFC 9728 protected resource metadata: well-known paths and URLs, the document, and the form
// audiences are compared in.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchyardError } from '../../src/core/errors.js';
import { canonicalResource, prmDocument, prmPath, prmUrl } from '../../src/auth/prm.js';

test('prmPath inserts the mount path after the well-known suffix (RFC 9728 §3.1)', () => {
  assert.equal(prmPath('/mcp'), '/.well-known/oauth-protected-resource/mcp');
  assert.equal(prmPath('/u/github/mcp'), '/.well-known/oauth-protected-resource/u/github/mcp');
  assert.equal(prmPath('/mcp/'), '/.well-known/oauth-protected-resource/mcp');
  assert.equal(prmPath('/'), '/.well-known/oauth-protected-resource');
  assert.equal(prmPath(''), '/.well-known/oauth-protected-resource');
  assert.throws(
    () => prmPath('mcp'),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT',
  );
});

test('prmUrl follows the table of the spec digest (path-inserted; query kept after the path)', () => {
  assert.equal(prmUrl('https://gw.example.com/mcp'), 'https://gw.example.com/.well-known/oauth-protected-resource/mcp');
  assert.equal(prmUrl('https://gw.example.com/u/github/mcp'), 'https://gw.example.com/.well-known/oauth-protected-resource/u/github/mcp');
  assert.equal(prmUrl('https://gw.example.com:8443'), 'https://gw.example.com:8443/.well-known/oauth-protected-resource');
  assert.equal(prmUrl('https://gw.example.com/mcp?tenant=a'), 'https://gw.example.com/.well-known/oauth-protected-resource/mcp?tenant=a');
});

test('prmDocument: RFC 9728 §2 members, bearer tokens in the header only', () => {
  assert.deepEqual(
    prmDocument({ resource: 'https://gw.example.com/mcp', authorizationServers: ['https://as.example.com'], scopesSupported: ['mcp:read', 'mcp:write'] }),
    {
      resource: 'https://gw.example.com/mcp',
      authorization_servers: ['https://as.example.com'],
      scopes_supported: ['mcp:read', 'mcp:write'],
      bearer_methods_supported: ['header'],
    },
  );
  assert.deepEqual(prmDocument({ resource: 'http://127.0.0.1:7600/mcp', authorizationServers: [], resourceName: 'Switchyard' }), {
    resource: 'http://127.0.0.1:7600/mcp',
    bearer_methods_supported: ['header'],
    resource_name: 'Switchyard',
  });
  for (const resource of ['urn:x', 'https://gw.example.com/mcp#frag', 'not a url']) {
    assert.throws(
      () => prmDocument({ resource, authorizationServers: [] }),
      (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_INTERNAL_FAULT',
      resource,
    );
  }
});

test('canonicalResource lower-cases scheme and host, drops a default port and a lone slash; other strings stay', () => {
  assert.equal(canonicalResource('HTTPS://GW.Example.COM/mcp'), 'https://gw.example.com/mcp');
  assert.equal(canonicalResource('https://gw.example.com:443/MCP'), 'https://gw.example.com/MCP');
  assert.equal(canonicalResource('https://gw.example.com/'), 'https://gw.example.com');
  assert.equal(canonicalResource('https://gw.example.com'), 'https://gw.example.com');
  assert.equal(canonicalResource('https://gw.example.com/mcp/'), 'https://gw.example.com/mcp/');
  assert.equal(canonicalResource('api://Switchyard'), 'api://Switchyard');
  assert.equal(canonicalResource('switchyard-api'), 'switchyard-api');
});
