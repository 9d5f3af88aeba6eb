// Regression: the bounds behind many idle sessions, through the real CLI. The share of connections
// kept free of streams was a fixed 1/16 that no flag could change, a maxConnections above the
// open-file limit was silently not in force, and every 2025 initialize walked all live sessions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { CLI, startCli } from '../helpers/cli.js';
import { H2025, initSession, post } from '../helpers/http.js';
import { openFileLimit } from '../../src/transports/connections.js';

type Stream = { status: number; body: string; req: http.ClientRequest };

/** One GET /sse on its own connection: resolves at the headers for 200 (the stream stays open), at the end of the body otherwise. */
function openSse(port: number, t: { after(fn: () => void): void }): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/sse', agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode === 200) return resolve({ status: 200, body: '', req });
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, req }));
    });
    req.on('error', reject);
    t.after(() => req.destroy());
  });
}

/** Opens HTTP+SSE streams one at a time until one is refused (at most `max`); resolves with how many opened and the refusal. */
async function streamsUntilRefused(port: number, max: number, t: { after(fn: () => void): void }): Promise<{ opened: number; refusal: Stream | undefined }> {
  for (let i = 0; i < max; i++) {
    const s = await openSse(port, t);
    if (s.status !== 200) return { opened: i, refusal: s };
  }
  return { opened: max, refusal: undefined };
}

const STREAM_LIMIT_BODY = {
  jsonrpc: '2.0',
  id: null,
  error: { code: -32000, message: 'Too many open streams for the connection bound' },
};

const STREAM_CASES: Array<{ name: string; bounds: string[]; streams: number }> = [
  {
    name: 'HTTP+SSE streams: maxConnections 32 keeps 1/16 (2) free by default, so the 31st stream gets 503 SWY_ERR_HTTP_STREAM_LIMIT',
    bounds: ['--max-connections', '32', '--limit', 'maxConnectionsPerAddress=1000'],
    streams: 30,
  },
  {
    name: '--limit streamReserveDivisor=32 applies to maxConnections: 31 streams of 32 connections, then 503',
    bounds: ['--max-connections', '32', '--limit', 'maxConnectionsPerAddress=1000', '--limit', 'streamReserveDivisor=32'],
    streams: 31,
  },
  {
    name: '--limit streamReserveDivisor applies to maxConnectionsPerAddress too: 31 streams of 32 from one address, then 503',
    bounds: ['--max-connections', '1000', '--limit', 'maxConnectionsPerAddress=32', '--limit', 'streamReserveDivisor=32'],
    streams: 31,
  },
];

for (const c of STREAM_CASES) {
  test(c.name, async (t) => {
    const gw = await startCli(t, ['--legacy-sse', '--no-admin', '--log-level', 'warn', ...c.bounds]);
    const { opened, refusal } = await streamsUntilRefused(gw.port, 40, t);
    assert.equal(opened, c.streams);
    assert.equal(refusal?.status, 503);
    assert.deepEqual(JSON.parse(refusal.body), STREAM_LIMIT_BODY);
  });
}

test('--limit streamReserveDivisor=0 is refused with exit 2', async (t) => {
  const bad = spawn(process.execPath, [CLI, '--port', '0', '--no-admin', '--limit', 'streamReserveDivisor=0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  bad.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => bad.once('exit', resolve));
  t.after(() => bad.kill('SIGKILL'));
  assert.equal(code, 2);
  assert.match(err, /streamReserveDivisor must be at least 1/);
});

/**
 * Runs the CLI under `ulimit -n FILES` (a shell lowers the limit; Node keeps it, the hard limit
 * being lowered too) until its listening line and 500 ms of quiet after it; resolves with its
 * JSON log records.
 */
async function recordsUnderFileLimit(t: { after(fn: () => void): void }, files: number, args: string[]): Promise<Array<Record<string, unknown>>> {
  const child = spawn(
    'sh',
    ['-c', `ulimit -n ${files} && exec "$0" "$@"`, process.execPath, CLI, '--port', '0', '--no-admin', '--log-level', 'warn', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  t.after(() => child.kill('SIGKILL'));
  let err = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 20 s: ${err}`)), 20_000);
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening on http/.test(err)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (c) => reject(new Error(`exited ${c}: ${err}`)));
  });
  // pino writes asynchronously: a record logged before the listening line may arrive after it
  // (CI once read the banner first and missed the warning). Wait until stderr is quiet for 500 ms.
  for (let seen = err.length, quietSince = Date.now(); Date.now() - quietSince < 500;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (err.length !== seen) [seen, quietSince] = [err.length, Date.now()];
  }
  return err
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('maxConnections above the open-file limit is said at start; at the limit less 64 headroom nothing is said', async (t) => {
  const over = await recordsUnderFileLimit(t, 256, ['--max-connections', '193']);
  const warned = over.filter((r) => r.msg === 'maxConnections is above the open-file limit');
  assert.equal(warned.length, 1);
  assert.equal(warned[0].level, 40);
  assert.equal(warned[0].maxConnections, 193);
  assert.equal(warned[0].openFileLimit, 256);
  assert.equal(warned[0].needed, 257);
  const fits = await recordsUnderFileLimit(t, 256, ['--max-connections', '192']);
  assert.deepEqual(
    fits.filter((r) => r.msg === 'maxConnections is above the open-file limit'),
    [],
  );
});

test('openFileLimit reads the soft limit of /proc/self/limits, and nothing from "unlimited" or other text', () => {
  const text = [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max processes             unlimited            unlimited            processes ',
    'Max open files            20000                40000                files     ',
  ].join('\n');
  assert.equal(openFileLimit(text), 20000);
  assert.equal(openFileLimit('Max open files            unlimited            unlimited            files'), undefined);
  assert.equal(openFileLimit(''), undefined);
});

test('2025 sessions: at maxSessions an expired session frees its slot for the next initialize', async (t) => {
  const gw = await startCli(t, ['--no-admin', '--max-sessions', '2', '--limit', 'sessionIdleMs=3000', '--log-level', 'warn']);
  await initSession(gw.url);
  await initSession(gw.url);
  const init = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const refused = await post(gw.url, init, H2025);
  assert.equal(refused.status, 503);
  assert.deepEqual(refused.json, { jsonrpc: '2.0', id: 0, error: { code: -32000, message: 'Too many sessions' } });
  // Bounded: 100 tries 100 ms apart, well past the 3 s idle time.
  let status = 0;
  for (let i = 0; i < 100 && status !== 200; i++) {
    await sleep(100);
    status = (await post(gw.url, init, H2025)).status;
  }
  assert.equal(status, 200);
});
