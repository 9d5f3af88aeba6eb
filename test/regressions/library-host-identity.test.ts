// A user trial of the library: an identity not built with `hostIdentity` (a string, or `{ id }`)
// passed by the plugin's `identity(request)` or as `{ identity }` to fetch or handle made a 2025
// `initialize` fail with 500 -32603 `Internal error` and was silently taken for 2026-07-28
// requests. Now it is refused the same way in every era, and the host's mistake is logged once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { request } from 'undici';
import { hostIdentity, type Identity } from '../../src/index.js';
import { H2025, modernBody, modernHeaders } from '../helpers/http.js';
import { switchyard } from '../helpers/library.js';

/** What a host hands in, by the test header `x-who`. */
const GIVEN: Record<string, unknown> = { string: 'alice', object: { id: 'alice' }, built: hostIdentity('alice'), none: null };

const refused = (detail: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32603, message: `Internal error: the host application passed an invalid identity: ${detail}; build it with hostIdentity()` },
});
const WANT: Record<string, unknown> = {
  string: refused('a string, not an Identity object'),
  object: refused('`issuer` must be a non-empty string'),
};

const ERAS = {
  '2026-07-28': { headers: modernHeaders('tools/list'), body: JSON.stringify(modernBody(1, 'tools/list')) },
  '2025-06-18': {
    headers: H2025,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  },
};

type Send = (who: string, era: keyof typeof ERAS) => Promise<{ status: number; body: unknown }>;

/** Each kind of identity in each era: built and none are served (200), the others refused (500) with the same body. */
async function checkAll(send: Send, records: Array<Record<string, unknown>>): Promise<void> {
  for (const era of Object.keys(ERAS) as Array<keyof typeof ERAS>)
    for (const who of Object.keys(GIVEN)) {
      const r = await send(who, era);
      if (who in WANT) assert.deepEqual(r, { status: 500, body: WANT[who] }, `${who} in ${era}`);
      else assert.equal(r.status, 200, `${who} in ${era}`);
    }
  const logged = records.filter((r) => r.level === 50);
  assert.deepEqual(
    logged.map((r) => [r.msg, (r.err as { code?: string }).code]),
    [['the host application passed an invalid identity', 'SWY_ERR_HOST_IDENTITY_INVALID']],
  );
}

const json = async (text: string): Promise<unknown> => (text.startsWith('{') ? JSON.parse(text) : text);

test('the Node handler refuses an identity not built with hostIdentity, in every era', async (t) => {
  const sy = switchyard(t, {});
  const server = http.createServer((req, res) => void sy.handle(req, res, { identity: GIVEN[String(req.headers['x-who'])] as Identity }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  await checkAll(async (who, era) => {
    const r = await request(url, { method: 'POST', headers: { ...ERAS[era].headers, 'x-who': who }, body: ERAS[era].body });
    return { status: r.statusCode, body: await json(await r.body.text()) };
  }, sy.records);
});

test('the fetch handler refuses an identity not built with hostIdentity, in every era', async (t) => {
  const sy = switchyard(t, {});
  await checkAll(async (who, era) => {
    const req = new Request('http://127.0.0.1/mcp', { method: 'POST', headers: ERAS[era].headers, body: ERAS[era].body });
    const r = await sy.fetch(req, { identity: GIVEN[who] as Identity });
    return { status: r.status, body: await json(await r.text()) };
  }, sy.records);
});

test('the fastify plugin refuses an identity not built with hostIdentity, in every era', async (t) => {
  const sy = switchyard(t, {});
  const app = Fastify();
  t.after(() => app.close());
  await app.register(sy.plugin, { identity: (req) => GIVEN[String(req.headers['x-who'])] as Identity });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`;
  await checkAll(async (who, era) => {
    const r = await request(url, { method: 'POST', headers: { ...ERAS[era].headers, 'x-who': who }, body: ERAS[era].body });
    return { status: r.statusCode, body: await json(await r.body.text()) };
  }, sy.records);
});
