#!/usr/bin/env node
// Switchyard replicas sharing one Redis, as one process tree for the bench (so its CPU is counted
// whole): `node replicas.mjs PORT N`. N = 3: three replicas behind nginx round robin
// (deploy/nginx/switchyard.conf, moved to loopback) listening on PORT; N = 1: one replica with
// `--redis` on PORT itself. Every replica serves the embedded demo. Stops everything on SIGTERM.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
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
if (!Number.isInteger(port) || ![1, 3].includes(count)) {
  process.stderr.write('usage: replicas.mjs PORT 1|3\n');
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
ports.forEach((p, i) =>
  run(
    process.execPath,
    [
      MAIN,
      '--port',
      String(p),
      '--legacy-sse',
      '--max-subscriptions',
      '4096',
      '--max-connections',
      '8192',
      '--log-level',
      'warn',
      '--redis',
      `redis://127.0.0.1:${redisPort}`,
    ],
    { SWITCHYARD_CLUSTER_KEY: key, SWITCHYARD_REPLICA_ID: `bench-${i + 1}` },
  ),
);
await Promise.all(ports.map(until));

if (count === 3) {
  // The shipped server block, its replicas and listener on loopback.
  let n = 0;
  const site = readFileSync(join(ROOT, 'deploy', 'nginx', 'switchyard.conf'), 'utf8')
    .replace(/^(\s*server\s+)switchyard-\d+:7600;/gm, (_, lead) => `${lead}127.0.0.1:${ports[n++]};`)
    .replace(/^(\s*listen\s+)8080;/m, `$1127.0.0.1:${port};`);
  writeFileSync(join(dir, 'switchyard.conf'), site);
  const temps = ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];
  for (const d of temps) mkdirSync(join(dir, d));
  const main = join(dir, 'nginx.conf');
  writeFileSync(
    main,
    [
      ...(process.getuid?.() === 0 ? [`user ${userInfo().username};`] : []),
      'daemon off;',
      'master_process off;',
      `error_log ${dir}/error.log warn;`,
      `pid ${dir}/nginx.pid;`,
      'events { worker_connections 4096; }',
      'http {',
      '  access_log off;',
      ...temps.map((d) => `  ${d === 'body' ? 'client_body' : d}_temp_path ${dir}/${d};`),
      `  include ${dir}/switchyard.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  run(NGINX, ['-p', dir, '-e', `${dir}/error.log`, '-c', main]);
  await until(port);
}
process.stderr.write(`replicas: ${count} on ${port}\n`);
