// A call held for a 2026-07-28 client's `input_required` retry buffers at most
// MAX_QUEUED_EVENT_BYTES of what its upstream sends meanwhile. Found by hostile testing: a call's
// queue was bounded by its number of events only (10,000), and nothing takes them while the call
// is held, so an HTTP upstream that asked for an elicitation and then sent 64 KiB progress
// messages made one held call keep 640 MB (gateway RSS from 190 MB to 807 MB) until the client's
// retry or the hold's expiry. Past the byte bound the call now fails as past the count bound
// (SWY_ERR_UPSTREAM_PROTOCOL), and the retry is told so.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import { MAX_QUEUED_EVENT_BYTES } from '../../src/core/calls.js';
import { gateway } from '../helpers/gateway.js';
import { modernBody, modernHeaders, post } from '../helpers/http.js';
import { sessionStub } from '../helpers/stub-http.js';

/** Progress messages the upstream sends while the call is held: 64 KiB each, 24 MiB in all (well under the 10,000-event bound). */
const EVENTS = 384;
const PAD = 'p'.repeat(64 * 1024);

/** The `progressToken` a request's params carry, if any. */
function progressTokenOf(m: unknown): unknown {
  const params = (m as { params?: unknown }).params;
  const meta = typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  return typeof meta === 'object' && meta !== null ? (meta as { progressToken?: unknown }).progressToken : undefined;
}

test('a held call buffers at most MAX_QUEUED_EVENT_BYTES of its upstream progress; past it the retry gets the upstream protocol error', async (t) => {
  let flooded: () => void = () => {};
  const floodDone = new Promise<void>((r) => (flooded = r));
  let callStream: http.ServerResponse | undefined;
  let callId: unknown;
  let flood: () => void = () => assert.fail('no call');
  const url = await sessionStub(t, {
    name: 'chatty',
    tool: 'chatty',
    before: (_req, res, m) => {
      if (m?.id !== 'el1' || !callStream) return false;
      // The client's answer to the elicitation: the call ends.
      res.writeHead(202).end();
      callStream.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
      return true;
    },
    call: (id, res, m) => {
      // The call's stream: an elicitation (the gateway holds the call for the client's retry),
      // then, once it is held, progress messages nobody takes until the retry.
      callStream = res;
      callId = id;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ev = (o: unknown) => res.write(`event: message\ndata: ${JSON.stringify(o)}\n\n`);
      ev({ jsonrpc: '2.0', id: 'el1', method: 'elicitation/create', params: { message: 'name?', requestedSchema: { type: 'object', properties: {} } } });
      const token = progressTokenOf(m);
      flood = () => {
        let last = true;
        for (let i = 1; i <= EVENTS; i++)
          last = ev({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, message: PAD } });
        if (last) flooded();
        else res.once('drain', flooded);
      };
    },
  });
  const gw = await gateway(t, { upstreamUrl: url, upstreamEra: '2025-06-18' });
  const caps = { elicitation: {} };
  const first = await post(
    gw.url,
    modernBody(1, 'tools/call', { name: 'chatty', arguments: {}, _meta: { progressToken: 'p1' } }, caps),
    modernHeaders('tools/call', 'chatty'),
  );
  const round = (first.json as { result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> } }).result;
  assert.equal(round.resultType, 'input_required');
  assert.deepEqual(Object.keys(round.inputRequests), ['input-el1']);
  // Once the call is held, the upstream sends its progress; every message handed to the
  // gateway's connection, give it a moment to read them.
  flood();
  await floodDone;
  await new Promise((r) => setTimeout(r, 500));
  const retry = await post(
    gw.url,
    modernBody(
      2,
      'tools/call',
      { name: 'chatty', arguments: {}, requestState: round.requestState, inputResponses: { 'input-el1': { action: 'decline' } } },
      caps,
    ),
    modernHeaders('tools/call', 'chatty'),
  );
  assert.deepEqual(retry.json, {
    jsonrpc: '2.0',
    id: 2,
    error: { code: -32603, message: `Upstream protocol error: more than ${MAX_QUEUED_EVENT_BYTES} bytes of events buffered for one call` },
  });
});
