// Rules on request.arguments through a real gateway, with a bearer principal whose decisions are
// remembered: allowed and denied by argument value, fail closed on an absent key, no decision
// carried across arguments, curation renames before the rule (it sees the upstream's tool and
// its arguments), lists, and audit lines without argument values.
// See 2025-11-25 server/tools (tools/call arguments), server/prompts (prompts/get arguments).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthServer } from '../fixtures/auth-server.js';
import { validateFile } from '../helpers/cli.js';
import { connectWithToken, everythingUpstream, gatewayFromConfig, modernCall } from '../helpers/identity.js';

const SECRET = 'sk-live-DO-NOT-LOG-7f3a';
const DENIED = (name: string, kind = 'tool') => ({ code: -32010, message: `Forbidden by policy: ${kind} ${name}`, data: { kind, name } });

const POLICY = {
  default: 'allow',
  rules: [
    { name: 'small-sums', effect: 'deny', when: 'component.name == "add" && request.arguments.a > 100' },
    { name: 'no-metadata', effect: 'deny', when: 'component.name == "echo" && request.arguments.message.startsWith("http://169.254.")' },
    { name: 'formal-only', effect: 'deny', when: 'component.kind == "prompt" && request.arguments.style != "formal"' },
    { name: 'no-touch', effect: 'deny', when: 'component.name == "touch"' },
  ],
};

async function bobOn(t: { after(fn: () => Promise<void>): void }, raw: Record<string, unknown>) {
  const as = await startAuthServer(t, { machines: ['bob'] });
  const gw = await gatewayFromConfig(t, { auth: { bearer: { issuer: as.issuer } }, ...raw });
  const url = gw.urls[0];
  const token = await as.clientCredentialsToken(url, undefined, 'bob');
  return { gw, url, token, bob: `Bearer ${token}` };
}

const errorOf = (r: { json: unknown }) => (r.json as { error?: unknown }).error;
const textOf = (r: { json: unknown }) => (r.json as { result?: { content?: Array<{ text?: string }> } }).result?.content?.[0]?.text;

test('one principal, one tool: each call is decided on its own arguments, in either order, however often', async (t) => {
  const { gw, url, bob } = await bobOn(t, { policy: POLICY, upstreams: { demo: { transport: 'embedded' } } });
  let id = 0;
  for (let round = 0; round < 3; round++) {
    assert.equal(textOf(await modernCall(url, ++id, 'tools/call', { name: 'add', arguments: { a: 1, b: 2 } }, bob)), '3');
    assert.deepEqual(errorOf(await modernCall(url, ++id, 'tools/call', { name: 'add', arguments: { a: 101, b: 2 } }, bob)), DENIED('add'));
    assert.equal(textOf(await modernCall(url, ++id, 'tools/call', { name: 'add', arguments: { a: 100, b: 2 } }, bob)), '102');
    assert.deepEqual(
      errorOf(await modernCall(url, ++id, 'tools/call', { name: 'echo', arguments: { message: `http://169.254.169.254/?k=${SECRET}` } }, bob)),
      DENIED('echo'),
    );
    assert.equal(textOf(await modernCall(url, ++id, 'tools/call', { name: 'echo', arguments: { message: SECRET } }, bob)), `Echo: ${SECRET}`);
  }
  // prompts/get: allowed when style is formal; an absent style fails the deny rule, which then matches (closed).
  const greeting = (args: Record<string, string>) => modernCall(url, ++id, 'prompts/get', { name: 'greeting', arguments: args }, bob);
  assert.equal(errorOf(await greeting({ name: 'Ada', style: 'formal' })), undefined);
  assert.deepEqual(errorOf(await greeting({ name: 'Ada', style: 'casual' })), DENIED('greeting', 'prompt'));
  assert.deepEqual(errorOf(await greeting({ name: 'Ada' })), DENIED('greeting', 'prompt'));
  // The audit lines name tool, decision and rule, and no argument value (nor do failure lines).
  const lines = gw.records.filter((r) => r.msg === 'policy decision' || r.msg === 'policy rule failed to evaluate');
  assert.equal(lines.filter((r) => r.msg === 'policy decision').length, id);
  assert.doesNotMatch(JSON.stringify(lines), new RegExp(`${SECRET}|169\\.254|casual|formal"|Ada`));
  assert.deepEqual(
    lines.filter((r) => r.msg === 'policy decision' && r.decision === 'deny').map((r) => Object.keys(r).sort().join()),
    Array(8).fill('component,decision,level,method,msg,principal,rule'),
  );
  assert.deepEqual(
    lines.filter((r) => r.msg === 'policy rule failed to evaluate').map((r) => r.error),
    ['No such key: style (at character 49)'],
  );
});

test('an absent argument fails an allow rule closed; official clients (v2 and v1) see the same decisions', async (t) => {
  const { url, token } = await bobOn(t, {
    policy: { default: 'deny', rules: [{ name: 'hello-only', effect: 'allow', when: 'component.name == "echo" && request.arguments.message == "hello"' }] },
    upstreams: { demo: { transport: 'embedded' } },
  });
  for (const kind of ['v2-2026', 'v1-streamable'] as const) {
    const client = await connectWithToken(kind, url, token);
    try {
      assert.deepEqual((await client.callTool('echo', { message: 'hello' })).content, [{ type: 'text', text: 'Echo: hello' }], kind);
      await assert.rejects(client.callTool('echo', { message: 'other' }), /Forbidden by policy: tool echo/, kind);
      await assert.rejects(client.callTool('echo', {}), /Forbidden by policy: tool echo/, kind);
      assert.deepEqual((await client.callTool('echo', { message: 'hello' })).content, [{ type: 'text', text: 'Echo: hello' }], kind);
      // Listed: some arguments allow echo; nothing allows the others.
      assert.deepEqual(
        (await client.listTools()).tools.map((x) => x.name),
        ['echo'],
        kind,
      );
    } finally {
      await client.close();
    }
  }
});

test('hideDenied lists: a tool some arguments allow is listed, one denied whatever the arguments is not; a rename is undone before the rule', async (t) => {
  const { url, bob } = await bobOn(t, {
    policy: { ...POLICY, hideDenied: true },
    upstreams: { demo: { transport: 'embedded', tools: { rename: { add: 'sum' } } } },
  });
  const listed = (await modernCall(url, 1, 'tools/list', {}, bob)).json as { result: { tools: Array<{ name: string }> } };
  assert.deepEqual(
    listed.result.tools.map((x) => x.name),
    ['echo', 'sum', 'slow', 'ask', 'lookup'],
  );
  const prompts = (await modernCall(url, 2, 'prompts/list', {}, bob)).json as { result: { prompts: Array<{ name: string }> } };
  assert.ok(prompts.result.prompts.some((p) => p.name === 'greeting'));
  // The rule names the upstream's tool (add) and sees the arguments the upstream gets.
  assert.equal(textOf(await modernCall(url, 3, 'tools/call', { name: 'sum', arguments: { a: 1, b: 2 } }, bob)), '3');
  assert.deepEqual(errorOf(await modernCall(url, 4, 'tools/call', { name: 'sum', arguments: { a: 101, b: 2 } }, bob)), {
    code: -32602,
    message: 'Invalid params: unknown tool: sum',
  });
});

test('server-everything over stdio: a rule on echo arguments; a policy without argument rules decides as before', async (t) => {
  const gw = await gatewayFromConfig(t, {
    policy: {
      default: 'allow',
      rules: [{ name: 'no-secrets', effect: 'deny', when: 'component.name == "echo" && request.arguments.message.contains("secret")' }],
    },
    upstreams: { everything: everythingUpstream() },
  });
  const url = gw.urls[0];
  const echo = (id: number, message: string) => modernCall(url, id, 'tools/call', { name: 'echo', arguments: { message } });
  for (let i = 0; i < 2; i++) {
    assert.equal(textOf(await echo(10 * i + 1, 'hi')), 'Echo: hi');
    assert.deepEqual(errorOf(await echo(10 * i + 2, 'a secret')), DENIED('echo'));
  }
  const plain = await gatewayFromConfig(t, {
    policy: { default: 'allow', rules: [{ name: 'no-echo', effect: 'deny', when: 'component.name == "echo" && request.method == "tools/call"' }] },
    upstreams: { everything: everythingUpstream() },
  });
  assert.deepEqual(errorOf(await modernCall(plain.urls[0], 1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } })), DENIED('echo'));
});

test('switchyard validate accepts rules on request.arguments and names the JSON Pointer of each misuse', async (t) => {
  const good = await validateFile(
    t,
    'good.yaml',
    'upstreams: { demo: { transport: embedded } }\npolicy:\n  default: allow\n  rules:\n    - { name: dry-run, effect: deny, when: \'component.name == "delete_repo" && request.arguments.dry_run != true\' }\n',
  );
  assert.deepEqual([good.code, good.stdout], [0, 'ok: 1 upstream\n']);
  const bad = await validateFile(
    t,
    'bad.yaml',
    [
      'upstreams:',
      '  demo:',
      '    transport: embedded',
      '    policy:',
      '      default: deny',
      '      rules: [{ name: typo, effect: allow, when: \'request.argument.database == "analytics"\' }]',
      'policy:',
      '  default: allow',
      '  rules:',
      '    - { name: not-map, effect: deny, when: \'request.arguments == "x"\' }',
      "    - { name: not-bool, effect: deny, when: 'request.arguments' }",
      '    - { name: re, effect: deny, when: \'request.arguments.url.matches("(?=x)")\' }',
      '',
    ].join('\n'),
  );
  assert.equal(bad.code, 1);
  assert.deepEqual(bad.stdout.split('\n').slice(1), [
    '  /policy/rules/0/when: no such overload: map<string, dyn> == string (at character 1)',
    '  /policy/rules/1/when: must be a bool expression, not map<string, dyn>',
    '  /policy/rules/2/when: invalid RE2 pattern "(?=x)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
    '  /upstreams/demo/policy/rules/0/when: No such key: argument (at character 9)',
    '',
  ]);
});
