// Regression (user trial 17): a 2025-session call with more than 10 server requests pending added
// one abort listener per request to the call's signal, and Node printed its non-JSON
// `MaxListenersExceededWarning … abort listeners` on stderr. stderr carries JSON lines only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CLI } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/gateway.js';

const ASKING = path.join(REPO_ROOT, 'test/fixtures/eliciting-server.mjs');

type Msg = { jsonrpc: string; id?: string | number; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> };

test('--serve-stdio, a 2025-06-18 session: a call with 64 elicitations pending at once (the per-session bound) is answered, and every stderr line is JSON', async (t) => {
  const child = spawn(process.execPath, [CLI, '--serve-stdio', '--no-admin', '--stdio', `"${process.execPath}" "${ASKING}"`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const send = (m: unknown) => child.stdin.write(JSON.stringify(m) + '\n');
  const messages: Msg[] = [];
  let out = '';
  let err = '';
  let answeredAll = false;
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const answered = new Promise<Msg>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const m = JSON.parse(out.slice(0, nl)) as Msg;
        out = out.slice(nl + 1);
        messages.push(m);
        if (m.id === 2 && m.method === undefined) resolve(m);
      }
      // Answered only once all 64 are pending together.
      const asks = messages.filter((m) => m.method === 'elicitation/create');
      if (!answeredAll && asks.length === 64) {
        answeredAll = true;
        for (const a of asks) send({ jsonrpc: '2.0', id: a.id, result: { action: 'accept', content: { n: 'x' } } });
      }
    });
  });

  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: { elicitation: {} }, clientInfo: { name: 'trial', version: '1' } },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask-many', arguments: { count: 64 } } });
  assert.deepEqual(await answered, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '64 of 64 accepted' }] } });
  child.stdin.end();
  assert.equal(await exited, 0);
  const lines = err.split('\n').filter((l) => l !== '');
  for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), line);
  assert.doesNotMatch(err, /MaxListenersExceededWarning/);
});
