// Sealed state (src/cluster/seal.ts): round trips, refusal of every altered token, key rotation,
// expiry, purpose binding, and a typical 2025 session state as an Mcp-Session-Id value.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { SwitchyardError } from '../../src/core/errors.js';
import { createSealer, MAX_TOKEN_CHARS, parseClusterKeys, type SealKey } from '../../src/cluster/seal.js';

const key = (id: string, fill?: number): SealKey => ({ id, secret: fill === undefined ? randomBytes(32) : Buffer.alloc(32, fill) });
const FAR = Date.UTC(2100, 0, 1);
/** Every visible ASCII character (0x21–0x7E). */
const VISIBLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i));

test('seal then open returns the value (any JSON value)', () => {
  const s = createSealer({ keys: [key('k1')] });
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      assert.deepEqual(s.open('session', s.seal('session', v, FAR)), JSON.parse(JSON.stringify(v)));
    }),
    { numRuns: 300 },
  );
});

test('a token is v1.<kid>.<iv>.<ciphertext+tag>, fresh IV each time', () => {
  const s = createSealer({ keys: [key('k1')] });
  const a = s.seal('task', { n: 1 }, FAR);
  const b = s.seal('task', { n: 1 }, FAR);
  assert.notEqual(a, b);
  const parts = a.split('.');
  assert.equal(parts.length, 4);
  assert.equal(parts[0], 'v1');
  assert.equal(parts[1], 'k1');
  assert.equal(Buffer.from(parts[2], 'base64url').length, 12);
  // {"e":4102444800000,"v":{"n":1}} is 31 bytes, plus the 16-byte tag.
  assert.equal(Buffer.from(parts[3], 'base64url').length, 31 + 16);
  assert.notEqual(a.split('.')[2], b.split('.')[2]);
});

test('every single-character alteration of a token is refused (each position, every visible ASCII character)', () => {
  const s = createSealer({ keys: [key('k1'), key('k2')] });
  const token = s.seal('session', { version: '2025-11-25', logLevel: 'info' }, FAR);
  assert.deepEqual(s.open('session', token), { version: '2025-11-25', logLevel: 'info' });
  let tried = 0;
  for (let i = 0; i < token.length; i++) {
    for (const c of VISIBLE) {
      if (c === token[i]) continue;
      const altered = token.slice(0, i) + c + token.slice(i + 1);
      assert.equal(s.open('session', altered), undefined, `position ${i} → ${c}`);
      tried++;
    }
  }
  assert.equal(tried, token.length * (VISIBLE.length - 1));
});

test('any single-character alteration, insertion or deletion (any character) is refused (fast-check)', () => {
  const s = createSealer({ keys: [key('k1')] });
  const token = s.seal('request-state', { round: 2, call: 'abc' }, FAR);
  fc.assert(
    fc.property(
      fc.nat({ max: token.length - 1 }),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      fc.constantFrom('replace', 'insert', 'delete'),
      (i, c, op) => {
        const altered =
          op === 'replace'
            ? token.slice(0, i) + c + token.slice(i + 1)
            : op === 'insert'
              ? token.slice(0, i) + c + token.slice(i)
              : token.slice(0, i) + token.slice(i + 1);
        fc.pre(altered !== token);
        assert.equal(s.open('request-state', altered), undefined);
      },
    ),
    { numRuns: 2000 },
  );
});

test('hostile input never throws and never opens', () => {
  const s = createSealer({ keys: [key('k1')] });
  fc.assert(
    fc.property(fc.anything(), (v) => {
      assert.equal(s.open('session', v), undefined);
    }),
  );
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{0,40}$/), { minLength: 0, maxLength: 6 }), (parts) => {
      assert.equal(s.open('session', ['v1', ...parts].join('.')), undefined);
    }),
  );
  const t = s.seal('session', 'x', FAR);
  for (const bad of ['', '.', 'v1', 'v1...', 'v2' + t.slice(2), t + '.', '.' + t, t.replace('.k1.', '.k9.'), 'x'.repeat(MAX_TOKEN_CHARS + 1)])
    assert.equal(s.open('session', bad), undefined, bad.slice(0, 40));
});

test('a token opens only for the purpose it was sealed for', () => {
  const s = createSealer({ keys: [key('k1')] });
  const t = s.seal('session', { a: 1 }, FAR);
  assert.deepEqual(s.open('session', t), { a: 1 });
  assert.equal(s.open('task', t), undefined);
  assert.equal(s.open('request-state', t), undefined);
  assert.equal(s.open('Session', t), undefined);
});

test('expiry: a token opens before expiresAtMs and not at or after it', () => {
  let clock = 1_000_000;
  const s = createSealer({ keys: [key('k1')], now: () => clock });
  const t = s.seal('session', 'v', 1_005_000);
  assert.equal(s.open('session', t), 'v');
  clock = 1_004_999;
  assert.equal(s.open('session', t), 'v');
  clock = 1_005_000;
  assert.equal(s.open('session', t), undefined);
  clock = 2_000_000;
  assert.equal(s.open('session', t), undefined);
});

test('rotation: the new key seals, the old key still opens; a replica without the new key cannot open new tokens', () => {
  const old = key('old', 1);
  const neu = key('new', 2);
  const before = createSealer({ keys: [old] });
  const during = createSealer({ keys: [neu, old] });
  const after = createSealer({ keys: [neu] });
  const oldToken = before.seal('session', { s: 'old' }, FAR);
  const newToken = during.seal('session', { s: 'new' }, FAR);
  assert.equal(during.currentKeyId, 'new');
  assert.equal(newToken.split('.')[1], 'new');
  assert.deepEqual(during.open('session', oldToken), { s: 'old' });
  assert.deepEqual(during.open('session', newToken), { s: 'new' });
  assert.deepEqual(after.open('session', newToken), { s: 'new' });
  assert.equal(after.open('session', oldToken), undefined);
  assert.equal(before.open('session', newToken), undefined);
  // Same id, different secret: refused (the tag fails).
  assert.equal(createSealer({ keys: [key('old', 3)] }).open('session', oldToken), undefined);
});

test('seal refuses what it cannot carry', () => {
  const s = createSealer({ keys: [key('k1')] });
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err instanceof SwitchyardError ? err.code : String(err);
    }
    return 'no error';
  };
  assert.equal(
    code(() => s.seal('session', undefined, FAR)),
    'SWY_ERR_INTERNAL_FAULT',
  );
  assert.equal(
    code(() => s.seal('session', () => 1, FAR)),
    'SWY_ERR_INTERNAL_FAULT',
  );
  assert.equal(
    code(() => s.seal('session', { n: 1n }, FAR)),
    'SWY_ERR_INTERNAL_FAULT',
  );
  assert.equal(
    code(() => s.seal('session', 1, 1.5)),
    'SWY_ERR_INTERNAL_FAULT',
  );
  assert.equal(
    code(() => s.seal('Bad Purpose', 1, FAR)),
    'SWY_ERR_INTERNAL_FAULT',
  );
});

test('bad keys are configuration errors', () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err instanceof SwitchyardError ? `${err.code}: ${err.message}` : String(err);
    }
    return 'no error';
  };
  assert.equal(
    code(() => createSealer({ keys: [] })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: at least one key is required',
  );
  assert.equal(
    code(() => createSealer({ keys: [{ id: 'k1', secret: Buffer.alloc(16) }] })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: key k1 must be 32 bytes, got 16',
  );
  assert.equal(
    code(() => createSealer({ keys: [key('a.b')] })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: a key id must be 1-32 characters of A-Z a-z 0-9 _ -',
  );
  assert.equal(
    code(() => createSealer({ keys: [key('k'), key('k')] })),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: key id k appears twice',
  );
});

test('SWITCHYARD_CLUSTER_KEY: base64 or base64url 32-byte keys, current first; ids derived from the keys', () => {
  const a = Buffer.alloc(32, 0xfb); // base64 with + and /
  const b = Buffer.alloc(32, 7);
  const keys = parseClusterKeys(`${a.toString('base64')}, ${b.toString('base64url')}`);
  assert.equal(keys.length, 2);
  assert.deepEqual(Buffer.from(keys[0].secret), a);
  assert.deepEqual(Buffer.from(keys[1].secret), b);
  assert.match(keys[0].id, /^[A-Za-z0-9_-]{8}$/);
  assert.notEqual(keys[0].id, keys[1].id);
  // Stable: every replica derives the same id from the same key.
  assert.equal(parseClusterKeys(a.toString('base64url'))[0].id, keys[0].id);
  const s1 = createSealer({ keys: parseClusterKeys(a.toString('base64')) });
  const s2 = createSealer({ keys });
  assert.equal(s2.open('session', s1.seal('session', 'shared', FAR)), 'shared');
  const code = (text: string) => {
    try {
      parseClusterKeys(text);
    } catch (err) {
      return err instanceof SwitchyardError ? `${err.code}: ${err.message}` : String(err);
    }
    return 'no error';
  };
  assert.equal(code(''), 'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: empty (set SWITCHYARD_CLUSTER_KEY)');
  assert.equal(
    code(Buffer.alloc(31).toString('base64')),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: key 1 is not 32 bytes of base64 (make one with: openssl rand -base64 32)',
  );
  assert.equal(
    code('not base64 at all!'),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: key 1 is not 32 bytes of base64 (make one with: openssl rand -base64 32)',
  );
  assert.equal(
    code(`${a.toString('base64')},${a.toString('base64url')}`),
    'SWY_ERR_CONFIG_INVALID: Invalid configuration: cluster.key: key 2 repeats an earlier key',
  );
});

/** A full 2025-era session state as the session code would seal it (field names kept short on purpose). */
function typicalSessionState(nowMs: number): Record<string, unknown> {
  return {
    // negotiated revision
    v: '2025-11-25',
    // clientInfo, with a long name and the optional fields a 2025-11-25 client may send
    ci: {
      name: 'Visual Studio Code - Insiders / GitHub Copilot Chat (agent mode) with the Model Context Protocol extension pack, workspace: monorepo-platform-services-2025',
      title: 'Visual Studio Code Insiders - Copilot Chat Agent',
      version: '1.107.0-insider+20251124.a1b2c3d4e5f6',
      websiteUrl: 'https://code.visualstudio.com/docs/copilot/chat/mcp-servers',
    },
    // client capabilities (2025-11-25: roots, sampling with tools, form and url elicitation, tasks)
    cc: {
      roots: { listChanged: true },
      sampling: { context: {}, tools: {} },
      elicitation: { form: {}, url: {} },
      tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
      experimental: { 'vscode.chat': { version: 2 } },
    },
    // logging/setLevel
    ll: 'info',
    // principalKey(identity): 22 characters
    p: 'Zk3nV0qL8sW2xY5tR7uI9o',
    // upstream session hints: upstream name -> its Mcp-Session-Id
    us: {
      github: '3f2a9c4e-8b1d-4e6f-9a2c-5d7e1b3f4a6c',
      everything: 'a7c3e1f9-2b4d-4c6e-8f1a-3b5d7e9f1a2c',
      jira: 'mcp-session-0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a',
    },
    // resource subscriptions (resources/subscribe)
    rs: ['file:///workspace/README.md', 'github://repos/acme/platform/issues'],
    // mount and dialect the session belongs to
    m: '/mcp',
    d: '2025-03-26',
    // created, idle timeout (ms), absolute expiry (ms)
    c: nowMs,
    it: 1_800_000,
    x: nowMs + 24 * 3_600_000,
    // key id the session was sealed under (also in the token, kept for audit)
    k: 'k1',
  };
}

test('a typical 2025 session state seals under 4 KiB, as visible ASCII only (an Mcp-Session-Id value)', () => {
  const keys = parseClusterKeys(randomBytes(32).toString('base64'));
  const s = createSealer({ keys });
  const now = Date.UTC(2025, 11, 1);
  const state = typicalSessionState(now);
  const token = s.seal('session', state, now + 24 * 3_600_000);
  // 2025-11-25 basic/transports#session-management: the session id MUST only contain visible ASCII (0x21 to 0x7E).
  assert.match(token, /^[\x21-\x7E]+$/);
  assert.ok(token.length < 4096, `token is ${token.length} bytes`);
  // Size is exactly determined by the JSON length: 4/3 expansion of (JSON + 16-byte tag), plus the fixed parts.
  const jsonBytes = Buffer.byteLength(JSON.stringify({ e: now + 24 * 3_600_000, v: state }));
  assert.equal(token.length, 'v1.'.length + keys[0].id.length + 1 + 16 + 1 + Math.ceil(((jsonBytes + 16) * 4) / 3));
  assert.deepEqual(createSealer({ keys, now: () => now }).open('session', token), state);
});
