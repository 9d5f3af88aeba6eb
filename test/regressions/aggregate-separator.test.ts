// Regression from a user trial: with upstreams `x` and `x_` on the aggregate mount (separator
// `__`), `x_`'s tool `echo` was listed as `x___echo`, and a call of that name reached `x` with tool
// `_echo`. A prefixed name is split where the separator first occurs, so a member name may neither
// contain the separator nor end in its start; validate refuses both, and a name that begins with
// part of it (`_x`) still works.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fc from 'fast-check';
import pino from 'pino';
import { validateConfig } from '../../src/config/load.js';
import { prefixSplitsBack } from '../../src/core/upstream.js';
import { startGatewayFromConfig } from '../../src/gateway.js';
import { splitPrefixed } from '../../src/upstreams/aggregate.js';
import { validateFile } from '../helpers/cli.js';
import { configIssuesOf } from '../helpers/config.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';

const RAW = path.join(REPO_ROOT, 'test/fixtures/raw-server.mjs');
const raw = (greeting: string) => ({ command: process.execPath, args: [RAW, 'stdio', '--greeting', greeting] });

test('validate refuses an aggregated upstream name that ends in the start of the separator, at /aggregate/separator', async (t) => {
  const r = await validateFile(
    t,
    'switchyard.yaml',
    'upstreams: { x: {command: node, args: [srv.mjs]}, x_: {command: node, args: [srv.mjs]} }\naggregate: {}\n',
  );
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    `${r.file}: invalid config, 1 error\n  /aggregate/separator: overlaps the end of upstream name x_ (x___tool splits as x and _tool), so prefixed names would be ambiguous\n`,
  );
  // The same with another separator; an end that matches its start but does not overlap it is fine
  // (`b-` with `-_-`: `b--_-tool` splits at `b-`); a name that contains it is refused (as before).
  assert.deepEqual(configIssuesOf({ upstreams: { 'a-_': raw('a'), 'b-': raw('b') }, aggregate: { separator: '-_-' } }), [
    {
      path: '/aggregate/separator',
      message: 'overlaps the end of upstream name a-_ (a-_-_-tool splits as a and _-tool), so prefixed names would be ambiguous',
    },
  ]);
  assert.deepEqual(configIssuesOf({ upstreams: { a__b: raw('a') }, aggregate: {} }), [
    { path: '/aggregate/separator', message: 'occurs in upstream name a__b, so prefixed names would be ambiguous' },
  ]);
  // A member that is not aggregated may have any name.
  assert.deepEqual(configIssuesOf({ upstreams: { x: raw('x'), x_: raw('x_') }, aggregate: { upstreams: ['x'] } }), []);
});

test('a member name that begins with part of the separator splits back: _x__greeting reaches _x, x__greeting reaches x', async (t) => {
  const config = validateConfig({ listen: { host: '127.0.0.1', port: 0 }, upstreams: { x: raw('from x'), _x: raw('from _x') }, aggregate: {} }, 'test', {
    env: {},
  });
  const gw = await startGatewayFromConfig(config, pino({ level: 'silent' }));
  t.after(() => gw.close());
  const agg = gw.mounts.find((m) => m.name === 'aggregate')!.url;
  const list = await post(agg, modernBody(1, 'tools/list'), modernHeaders('tools/list'));
  assert.deepEqual(
    (list.json as { result: { tools: Array<{ name: string }> } }).result.tools.map((x) => x.name).filter((n) => n.endsWith('greeting')),
    ['x__greeting', '_x__greeting'],
  );
  for (const [name, text] of [
    ['x__greeting', 'from x'],
    ['_x__greeting', 'from _x'],
  ]) {
    const call = await post(agg, modernBody(2, 'tools/call', { name, arguments: {} }), modernHeaders('tools/call', name));
    assert.deepEqual((call.json as { result: { content: unknown } }).result.content, [{ type: 'text', text }], name);
  }
});

test('property: prefixSplitsBack accepts exactly the member names that splitPrefixed gives back for every tool name', () => {
  const chars = fc.constantFrom('a', 'b', '_', '-', '.');
  const word = (min: number, max: number) => fc.array(chars, { minLength: min, maxLength: max }).map((c) => c.join(''));
  fc.assert(
    fc.property(word(1, 6), word(1, 3), word(0, 4), (member, separator, tool) => {
      const back = splitPrefixed(`${member}${separator}${tool}`, separator);
      assert.equal(back?.member === member && back.name === tool, prefixSplitsBack(member, separator));
    }),
    { numRuns: 5000 },
  );
});
