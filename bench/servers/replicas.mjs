#!/usr/bin/env node
// Switchyard replicas sharing one Redis, as one process tree for the bench (so its CPU is counted
// whole): `node replicas.mjs PORT N [-- switchyard flags]`. N = 3: three replicas behind nginx
// round robin (deploy/nginx/switchyard.conf, moved to loopback) listening on PORT; N = 1: one
// replica with `--redis` on PORT itself. Every replica serves the embedded demo. Stops everything
// on SIGTERM.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';
import { freePort } from '../lib/procs.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const MAIN = process.env.SWITCHYARD_MAIN ?? join(ROOT, 'dist', 'src', 'cli', 'main.js');
const NGINX = process.env.SWITCHYARD_NGINX ?? '/usr/sbin/nginx';
const port = Number(process.argv[2]);
const count = Number(process.argv[3] ?? 3);
/** The flags every replica gets (after `--`), as the bench gives its one-process Switchyard. */
const switchyardArgs = process.argv.includes('--') ? process.argv.slice(process.argv.indexOf('--') + 1) : [];
if (!Number.isInteger(port) || ![1, 3].includes(count)) {
  process.stderr.write('usage: replicas.mjs PORT 1|3 [-- switchyard flags]\n');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'swy-bench-replicas-'));
const children = [];
const run = (cmd, args, env = {}) => {
  const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(c);
  c.once('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`replicas: ${cmd} exited (${code ?? signal})\n`);
      stop(1);
    }
  });
  return c;
};
let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  process.exit(code);
}
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => stop(0));

const listening = (p) =>
  new Promise((done) => {
    const s = connect(p, '127.0.0.1', () => {
      s.destroy();
      done(true);
    });
    s.on('error', () => done(false));
  });
async function until(p) {
  for (let i = 0; i < 1500; i++) {
    if (await listening(p)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`nothing listens on ${p}`);
}

const redisPort = await freePort();
run('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', '']);
await until(redisPort);
const key = randomBytes(32).toString('base64');
const ports = count === 1 ? [port] : await Promise.all([1, 2, 3].map(() => freePort()));
// nginx forwards the client's Host (the one it listens on), which a loopback bind's default refuses.
const hosts = count === 1 ? [] : ['--allowed-host', `127.0.0.1:${port}`];
ports.forEach((p, i) =>
  run(process.execPath, [MAIN, '--port', String(p), ...switchyardArgs, ...hosts, '--redis', `redis://127.0.0.1:${redisPort}`], {
    SWITCHYARD_CLUSTER_KEY: key,
    SWITCHYARD_REPLICA_ID: `bench-${i + 1}`,
  }),
);
await Promise.all(ports.map(until));

if (count === 3) {
  // The shipped server block with its replicas and listener on loopback, as the cluster test runs it.
  const { writeDeployNginx } = await import(join(ROOT, 'dist', 'test', 'helpers', 'nginx.js'));
  const main = writeDeployNginx(dir, port, ports);
  run(NGINX, ['-p', dir, '-e', `${dir}/error.log`, '-c', main]);
  await until(port);
}
process.stderr.write(`replicas: ${count} on ${port}\n`);
