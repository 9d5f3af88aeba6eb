// What initialize-era ids carry when sessions span replicas (dialects/2025-03-26/replicas.ts):
// sealed session ids under 4 KiB, stream ids naming their session and replica, server-request ids
// naming the replica waiting for the answer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSealer, keyDigest, parseClusterKeys } from '../../src/cluster/index.js';
import { SwitchyardError } from '../../src/core/errors.js';
import type { ReplicaServices } from '../../src/core/replica.js';
import {
  MAX_SESSION_ID_CHARS,
  openSealedSession,
  parseChanges,
  parseStreamName,
  replicaOfServerRequest,
  sealSession,
  serverIdSuffix,
  streamName,
} from '../../dialects/2025-03-26/replicas.js';
import { initialState } from '../../dialects/2025-03-26/session.js';

function services(now = () => Date.now()): ReplicaServices {
  return {
    replicaId: 'replica-a',
    seal: createSealer({ keys: parseClusterKeys(randomBytes(32).toString('base64')), now }),
    ledger: undefined as never,
    buffer: undefined,
    link: undefined,
    sessionMaxAgeMs: 86_400_000,
    logId: keyDigest,
  };
}

const identity = { issuer: 'https://issuer.example', subject: 'alice', scopes: [], claims: {}, source: 'jwt' as const };

test('a sealed session id opens to the state initialize fixed, on its mount and dialect only, until its age runs out', () => {
  let clock = 1_000_000;
  const rs = services(() => clock);
  const state = initialState(
    { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'c', version: '1' } },
    ['2025-11-25', '2025-06-18', '2025-03-26'],
    identity,
    'everything',
    '2025-03-26',
    clock,
  );
  assert.deepEqual(state, {
    v: '2025-06-18',
    ci: { name: 'c', version: '1' },
    cc: { elicitation: {} },
    // SHA-256 of issuer NUL subject, base64url, 22 characters (principalKey).
    p: '0MHmqqJrEiansKGj5MaADd',
    m: 'everything',
    d: '2025-03-26',
    c: 1_000_000,
  });
  const id = sealSession(rs, state);
  assert.match(id, /^[\x21-\x7e]+$/);
  assert.deepEqual(openSealedSession(rs, id, 'everything', '2025-03-26'), state);
  assert.equal(openSealedSession(rs, id, 'other-mount', '2025-03-26'), undefined);
  assert.equal(openSealedSession(rs, id, 'everything', '2024-11-05'), undefined);
  assert.equal(openSealedSession(services(), id, 'everything', '2025-03-26'), undefined, 'another key');
  clock += 86_400_000;
  assert.equal(openSealedSession(rs, id, 'everything', '2025-03-26'), undefined, 'sealed expiry');
});

test('a malformed initialize (non-object capabilities and clientInfo, a numeric protocolVersion) fixes a state that still seals and opens (found by a trial)', () => {
  const rs = services();
  const state = initialState(
    { protocolVersion: 20250618, capabilities: 'x', clientInfo: 5 },
    ['2025-11-25', '2025-06-18'],
    null,
    'demo',
    '2025-03-26',
    Date.now(),
  );
  assert.equal(state.v, '2025-11-25', 'the newest revision served');
  assert.deepEqual(state.cc, {}, 'no capability declared');
  assert.equal('ci' in state, false);
  const id = sealSession(rs, state);
  assert.deepEqual(openSealedSession(rs, id, 'demo', '2025-03-26'), state, 'another replica can rebuild it');
});

test('4 KiB: large client info is cut to name, version, title and websiteUrl; capabilities that still do not fit are refused', () => {
  const rs = services();
  const now = Date.now();
  const icons = [{ src: `data:image/png;base64,${'A'.repeat(6_000)}` }];
  const big = initialState(
    { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'n', version: '2', title: 'T', websiteUrl: 'https://c.example', icons } },
    ['2025-11-25'],
    null,
    'm',
    '2025-03-26',
    now,
  );
  const id = sealSession(rs, big);
  assert.ok(id.length <= MAX_SESSION_ID_CHARS, String(id.length));
  assert.deepEqual(openSealedSession(rs, id, 'm', '2025-03-26')?.ci, { name: 'n', version: '2', title: 'T', websiteUrl: 'https://c.example' });
  const huge = initialState(
    { protocolVersion: '2025-11-25', capabilities: { experimental: { x: 'y'.repeat(4_000) } } },
    ['2025-11-25'],
    null,
    'm',
    '2025-03-26',
    now,
  );
  assert.throws(
    () => sealSession(rs, huge),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_SESSION_STATE_TOO_LARGE' && err.status === 400 && err.rpcCode === -32602,
  );
});

test('stream ids name the session digest, the replica, the kind and a short request id; anything else does not parse', () => {
  const sd = keyDigest('some session');
  const p = streamName(sd, 'pod-7.zone_a-1f2e', 'p', '1z', 42);
  assert.equal(p, `${sd}~pod-7.zone_a-1f2e~p1z~n42`);
  assert.deepEqual(parseStreamName(p), { session: sd, replica: 'pod-7.zone_a-1f2e', kind: 'p', rid: 42 });
  assert.deepEqual(parseStreamName(streamName(sd, 'r', 'p', '2', 'req-é')), { session: sd, replica: 'r', kind: 'p', rid: 'req-é' });
  // A request id too long to carry is left out (the stream still works; only the owner-gone answer lacks an id).
  assert.deepEqual(parseStreamName(streamName(sd, 'r', 'p', '3', 'x'.repeat(40))), { session: sd, replica: 'r', kind: 'p', rid: undefined });
  assert.deepEqual(parseStreamName(streamName(sd, 'r', 'g', '4')), { session: sd, replica: 'r', kind: 'g', rid: undefined });
  const longest = streamName(sd, 'r'.repeat(64), 'p', 'zzzzzzzz', 'x'.repeat(18));
  assert.ok(longest.length <= 128, String(longest.length));
  for (const bad of ['p1', `${sd}~r`, `${sd}~r~x1`, `short~r~p1`, `${sd}~bad replica~p1`, `${sd}~r~p1~n1~extra`, ''])
    assert.equal(parseStreamName(bad), undefined, bad);
});

test('server-to-client request ids name the replica waiting for the answer', () => {
  assert.equal(`swy-7${serverIdSuffix('replica-b')}`, 'swy-7@replica-b');
  assert.equal(replicaOfServerRequest('swy-7@replica-b'), 'replica-b');
  for (const other of ['swy-7', 7, 'swy-x@r', 'swy-1@bad id', null, 'client-1@replica-b'])
    assert.equal(replicaOfServerRequest(other), undefined, String(other));
});

test('changeable state text that is not an object is read as no change', () => {
  assert.deepEqual(parseChanges('{"l":"info","s":["a"]}'), { l: 'info', s: ['a'] });
  for (const t of [undefined, 'null', '[1]', '"x"', '{broken']) assert.deepEqual(parseChanges(t), {});
});
