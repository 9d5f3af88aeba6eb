// A gateway whose stderr reader has gone (a log collector that died, `switchyard … | head`)
// still stops on SIGTERM. pino wrote the last lines synchronously from its exit hook, and
// sonic-boom 4's flushSync retries a failed write every 100 ms whatever the error, so on EPIPE
// the process never exited (found by a helper: a gateway spun at 10 writes a second after
// SIGTERM). The CLI now ends its log before it exits (src/log/logger.ts, endLog).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/gateway.js';

const BIN = path.join(REPO_ROOT, 'dist/src/cli/main.js');

/** Starts `args`, waits for `ready` on stderr, closes the stderr pipe's reading end, then sends SIGTERM; resolves with the exit code (or 'hung' after 10 s, then kills it). */
async function stopWithStderrGone(args: string[], ready: RegExp): Promise<number | null | 'hung'> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let err = '';
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`not ready: ${err}`)), 20_000);
    child.stderr.on('data', (d) => {
      err += d;
      if (ready.test(err)) {
        clearTimeout(t);
        resolve();
      }
    });
  });
  child.stderr.destroy();
  await new Promise((r) => setTimeout(r, 100));
  child.kill('SIGTERM');
  const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref());
  const got = await Promise.race([exited, hung]);
  if (got === 'hung') child.kill('SIGKILL');
  return got;
}

test('the gateway whose stderr reader goes before it prints its listening line still serves, and exits 0 on SIGTERM (found by a trial: it died with code 1)', async () => {
  const child = spawn(process.execPath, [BIN, '--port', '0', '--no-admin'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // The first log line comes before the plain "listening on" line: close the reader there.
  await new Promise<void>((resolve) => child.stderr.once('data', () => resolve()));
  child.stderr.destroy();
  const early = await Promise.race([exited, new Promise<'alive'>((resolve) => setTimeout(() => resolve('alive'), 2_000))]);
  assert.equal(early, 'alive');
  child.kill('SIGTERM');
  const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref());
  const got = await Promise.race([exited, hung]);
  if (got === 'hung') child.kill('SIGKILL');
  assert.equal(got, 0);
});

test('the gateway exits 0 on SIGTERM after its stderr reader has gone', async () => {
  assert.equal(await stopWithStderrGone(['--port', '0', '--no-admin'], /listening on/), 0);
});

// emulate's exit had the same shape (flush, then exit); it passed before the fix too, as a guard.
test('emulate exits 0 on SIGTERM after its stderr reader has gone', async () => {
  assert.equal(await stopWithStderrGone(['emulate', '--era', '2025-11-25', '--port', '0'], /listening|emulat/i), 0);
});

// The other side of it: in --serve-stdio, the client's reader of stdout goes. The gateway logs
// `stdio output closed` and ends; its `err` was an object literal, which pino's error serializer
// wrote as `{"type":"Object","message":…,"stack":""}`. It is the error's text now.
test('--serve-stdio whose stdout reader has gone logs the write error as text and exits', async () => {
  const child = spawn(process.execPath, [BIN, '--serve-stdio', '--log-level', 'info'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  child.stdout.destroy();
  child.stdin.write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }) + '\n',
  );
  const hung = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000).unref());
  const got = await Promise.race([exited, hung]);
  if (got === 'hung') child.kill('SIGKILL');
  assert.notEqual(got, 'hung');
  const line = err
    .split('\n')
    .filter((l) => l.includes('"stdio output closed"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
  assert.ok(line, err);
  assert.equal(line.err, 'write EPIPE');
  assert.equal(line.code, 'EPIPE');
});
