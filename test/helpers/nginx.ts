// Test helper: a real nginx (Debian package) as a prefix-stripping reverse proxy on a loopback port.

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The nginx binary (`.ci/install-packages.sh` installs it on CI). */
export const NGINX_BIN = process.env.SWITCHYARD_NGINX ?? ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p)) ?? 'nginx';

/** deploy/nginx/switchyard.conf as shipped. */
export const DEPLOY_NGINX_CONF = readFileSync(new URL('../../../deploy/nginx/switchyard.conf', import.meta.url), 'utf8');

/** Options of `startNginx`. */
export interface NginxOptions {
  /** Port of the upstream on 127.0.0.1. */
  upstreamPort: number;
  /** The public path prefix nginx strips, with leading and trailing `/` (default `/tenant-7/`). */
  prefix?: string;
  /** More directives for the proxied `location` block (`proxy_set_header Host $host;`). */
  extra?: string;
}

/** A running nginx. */
export interface StartedNginx {
  /** `http://127.0.0.1:<port><prefix>`, with the trailing `/`. */
  url: string;
  port: number;
  /** The generated configuration (for failure messages). */
  config: string;
  /** Stops nginx (fast shutdown) and removes its directory; safe to call twice. */
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function configFor(dir: string, port: number, opts: Required<Omit<NginxOptions, 'extra'>> & { extra: string }): string {
  const strip = opts.prefix.replace(/\/$/, '');
  // Running as root, nginx would switch its workers to `nobody`, who cannot use the temp dir.
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username};\n` : '';
  return `${user}daemon off;
master_process on;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location ${opts.prefix} {
      # The trailing "/" of proxy_pass replaces the matched prefix: ${opts.prefix}sse reaches the upstream as /sse.
      proxy_pass http://127.0.0.1:${opts.upstreamPort}/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # SSE: pass each event on as it comes.
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Prefix ${strip};
      ${opts.extra}
    }
  }
}
`;
}

/**
 * Starts nginx in the foreground (`daemon off`) with a generated configuration in a new temp
 * directory, listening on a free 127.0.0.1 port, proxying `prefix` to the upstream with the
 * prefix stripped, HTTP/1.1 to the upstream, no response buffering, and `X-Forwarded-For`,
 * `-Proto`, `-Host` (`$http_host`) and `-Prefix` set. Teardown is registered with `t.after`.
 * @throws Error when nginx does not start (its error log is in the message)
 */
export async function startNginx(t: { after(fn: () => Promise<void>): void }, options: NginxOptions): Promise<StartedNginx> {
  const prefix = options.prefix ?? '/tenant-7/';
  if (!/^\/([A-Za-z0-9._~-]+\/)+$/.test(prefix)) throw new Error(`prefix must look like /a/ or /a/b/, got ${prefix}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-nginx-'));
  let child: ChildProcess | undefined;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const ac = new AbortController();
      const done = await Promise.race([exited.then(() => true), sleep(5_000, false, { signal: ac.signal }).catch(() => false)]);
      ac.abort();
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    await rm(dir, { recursive: true, force: true });
  };
  t.after(close);
  // A free port can be taken between the probe and nginx's bind: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const config = configFor(dir, port, { prefix, upstreamPort: options.upstreamPort, extra: options.extra ?? '' });
    const file = path.join(dir, 'nginx.conf');
    await writeFile(file, config);
    await writeFile(path.join(dir, 'error.log'), '');
    const c = spawn(NGINX_BIN, ['-p', `${dir}/`, '-c', file, '-e', `${dir}/error.log`], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    let stderr = '';
    c.stderr?.setEncoding('utf8');
    c.stderr?.on('data', (d: string) => (stderr += d));
    c.on('error', (err) => (stderr += String(err)));
    for (let i = 0; i < 200 && c.exitCode === null && c.signalCode === null; i++) {
      if (await canConnect(port)) return { url: `http://127.0.0.1:${port}${prefix}`, port, config, close };
      await sleep(25);
    }
    const log = await readFile(path.join(dir, 'error.log'), 'utf8').catch(() => '');
    if (c.exitCode !== null && /Address already in use/.test(log + stderr)) continue;
    await close();
    throw new Error(`nginx did not start (exit ${c.exitCode}): ${stderr}\n${log}`);
  }
  await close();
  throw new Error('nginx: no free port after 5 attempts');
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * The shipped server block (deploy/nginx/switchyard.conf) with its replicas and listener moved
 * to loopback, inside a minimal main config in a new temp prefix (removed in `t.after`).
 * @param locationExtra directives added to its `location /` block (a test's response header).
 * @throws Error when the shipped file does not have one `server` line per replica
 */
export function deployNginxConfig(
  t: { after(fn: () => void | Promise<void>): void },
  listenPort: number,
  replicaPorts: readonly number[],
  locationExtra = '',
): { dir: string; main: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'swy-nginx-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, main: writeDeployNginx(dir, listenPort, replicaPorts, locationExtra) };
}

/**
 * Writes {@link deployNginxConfig}'s files into `dir` (the bench uses it too).
 * @returns the main config's path.
 * @throws Error when the shipped file does not have one `server` line per replica
 */
export function writeDeployNginx(dir: string, listenPort: number, replicaPorts: readonly number[], locationExtra = ''): string {
  let n = 0;
  let site = DEPLOY_NGINX_CONF.replace(/^(\s*server\s+)switchyard-\d+:7600;/gm, (_, lead: string) => `${lead}127.0.0.1:${replicaPorts[n++]};`).replace(
    /^(\s*listen\s+)8080;/m,
    `$1127.0.0.1:${listenPort};`,
  );
  if (n !== replicaPorts.length) throw new Error(`deploy/nginx/switchyard.conf has ${n} server lines for ${replicaPorts.length} replicas`);
  // Its access log goes into the temp prefix (the shipped path is the distribution's).
  site = site.replace(/^(\s*access_log\s+)\/var\/log\/nginx\/access\.log(\s)/m, `$1${dir}/access.log$2`);
  if (locationExtra) site = site.replace(/^(\s*proxy_pass http:\/\/switchyard;)$/m, `$1\n        ${locationExtra}`);
  writeFileSync(path.join(dir, 'switchyard.conf'), site);
  for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(dir, d));
  const main = path.join(dir, 'nginx.conf');
  // Running as root, nginx would switch its workers to `nobody`, who cannot use the temp dir.
  const user = process.getuid?.() === 0 ? [`user ${os.userInfo().username};`] : [];
  writeFileSync(
    main,
    [
      ...user,
      'daemon off;',
      'master_process off;',
      `error_log ${dir}/error.log info;`,
      `pid ${dir}/nginx.pid;`,
      'events { worker_connections 256; }',
      'http {',
      '  access_log off;',
      ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((d) => `  ${d === 'body' ? 'client_body' : d}_temp_path ${dir}/${d};`),
      `  include ${dir}/switchyard.conf;`,
      '}',
      '',
    ].join('\n'),
  );
  return main;
}

/** Runs nginx on `main` (from {@link deployNginxConfig}) until `t.after`; resolves once it accepts connections on `port`. */
export async function runNginx(t: { after(fn: () => void | Promise<void>): void }, main: string, dir: string, port: number): Promise<ChildProcess> {
  const child = spawn(NGINX_BIN, ['-p', dir, '-e', `${dir}/error.log`, '-c', main], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${readFileSync(`${dir}/error.log`, 'utf8')}`);
    if (await canConnect(port)) return child;
    await sleep(20);
  }
}
