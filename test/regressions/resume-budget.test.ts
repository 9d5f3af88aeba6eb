// Found by a trial (2026-12-04): the 2025 resumption buffers were bounded by events only (256 a
// stream, 32 streams a session), not by size: 9 sessions each keeping 256 events of 1.9 MB ended
// the gateway out of memory. All of a mount's sessions now share `resumeBufferBytes`: past it a
// stream drops its own oldest events, an event that does not fit is sent but not kept (resuming
// from before it is refused), and a session that ends gives its share back.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateway } from '../helpers/gateway.js';
import { initSession, openSse, send } from '../helpers/http.js';

/** Runs a 5-step `slow` call with progress on a POST stream to its end; resolves with the event ids. */
async function slowCall(url: string, headers: Record<string, string>, id: number): Promise<string[]> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'slow', arguments: { steps: 5, stepMs: 1 }, _meta: { progressToken: 'p' } },
  });
  const s = await openSse(url, 'POST', headers, body);
  const ids: string[] = [];
  for (;;) {
    const e = await s.next(10_000);
    if (e.data === '') continue; // the priming event (2025-11-25)
    if (e.id) ids.push(e.id);
    if ((JSON.parse(e.data) as { id?: number }).id === id) break;
  }
  s.close();
  return ids;
}

/** The status of a GET resuming after `lastEventId`, and the ids it replays (200: to the stream's end). */
async function resume(url: string, headers: Record<string, string>, lastEventId: string): Promise<{ status: number; ids: string[] }> {
  const r = await send(url, 'GET', undefined, { ...headers, accept: 'text/event-stream', 'last-event-id': lastEventId });
  const ids = r.status === 200 ? [...r.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]) : [];
  return { status: r.status, ids };
}

test('resumption buffers share resumeBufferBytes: a stream that fits replays, one past the budget is refused, an ended session gives its share back', async (t) => {
  const gw = await gateway(t, { limits: { resumeBufferBytes: 1_000 } });
  const session = async () => ({ ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' });
  const a = await session();
  const aIds = await slowCall(gw.url, a, 1);
  assert.equal(aIds.length, 6, 'five progress events and the response');
  // A's six events (about 700 characters) fit: resuming after the first replays the other five.
  assert.deepEqual(await resume(gw.url, a, aIds[0]), { status: 200, ids: aIds.slice(1) });

  // B's do not all fit beside A's: B keeps what it can of its own latest, and resuming from its
  // first event would miss some, so it is refused.
  const b = await session();
  const bIds = await slowCall(gw.url, b, 2);
  const refused = await resume(gw.url, b, bIds[0]);
  assert.equal(refused.status, 400);

  // A's session ends: its share is free again, and a new session's stream is kept whole.
  assert.equal((await send(gw.url, 'DELETE', undefined, a)).status, 200);
  const c = await session();
  const cIds = await slowCall(gw.url, c, 3);
  assert.deepEqual(await resume(gw.url, c, cIds[0]), { status: 200, ids: cIds.slice(1) });
});

// Found by a trial (2026-12-04): the sequence number went through Number(), so `p1.0x3` or
// `p1.+3` resumed as `p1.3`. Only the decimal digits we wrote name an event.
test('Last-Event-ID: a sequence number not written as we write it (0x1, +1, 1e0) names no event (400); the same number in decimal resumes', async (t) => {
  const gw = await gateway(t);
  const headers = { ...(await initSession(gw.url, '2025-11-25')), 'mcp-protocol-version': '2025-11-25' };
  const ids = await slowCall(gw.url, headers, 1);
  const stream = ids[0].slice(0, ids[0].lastIndexOf('.'));
  for (const seq of ['0x1', '+1', '1e0', '01']) assert.equal((await resume(gw.url, headers, `${stream}.${seq}`)).status, 400, seq);
  assert.deepEqual(await resume(gw.url, headers, `${stream}.1`), { status: 200, ids: ids.slice(1) });
});
