#!/usr/bin/env node
// The cost of identity and policy, in one run on one machine: 2026-07-28 `tools/call` echo on the
// embedded demo, without auth and with JWT bearer auth (the issuer's key cached after the first
// request) plus ten policy rules; runs alternate so that drift hits both alike.
//
//   node bench/identity.mjs            about a minute (needs `npm ci --prefix bench` once)
//   node bench/identity.mjs --quick    a few seconds
//
// Loopback only; every process it starts is stopped by itself, also on errors and SIGINT.

import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { freePort, installCleanup, killAllNow, start, treeCpuUs, waitFor } from './lib/procs.mjs';
import { expectOf, modernRequest, probe } from './lib/mcp.mjs';
import { cannon, median } from './lib/load.mjs';

const BENCH = dirname(fileURLToPath(import.meta.url));
const SWITCHYARD = join(resolve(BENCH, '..'), 'dist', 'src', 'cli', 'main.js');
const QUICK = process.argv.includes('--quick');
const CFG = QUICK ? { rounds: 2, seconds: 0.5, warmup: 0.3, connections: 32 } : { rounds: 5, seconds: 3, warmup: 1, connections: 32 };

installCleanup();
const watchdog = setTimeout(() => {
  process.stderr.write('bench: over the 300 s bound, stopping\n');
  killAllNow();
  process.exit(1);
}, 300_000);
watchdog.unref();

// A minimal issuer: RFC 8414 metadata and a JWKS, on loopback.
const { publicKey, privateKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'RS256', use: 'sig' };
const as = http.createServer((req, res) => {
  const body =
    req.url === '/.well-known/oauth-authorization-server'
      ? { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token` }
      : req.url === '/jwks'
        ? { keys: [jwk] }
        : undefined;
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? {}));
});
await new Promise((r) => as.listen(0, '127.0.0.1', r));
const issuer = `http://127.0.0.1:${as.address().port}`;

// Ten rules, none of which denies alice her echo: every call is decided by all of them.
const RULES = [
  `{ name: r1, effect: deny, when: "principal.sub == 'mallory'" }`,
  `{ name: r2, effect: deny, when: "component.kind == 'tool' && component.name == 'add' && principal.sub == 'bob'" }`,
  `{ name: r3, effect: deny, when: "component.name.startsWith('admin_')" }`,
  `{ name: r4, effect: deny, when: "!('mcp' in principal.scopes)" }`,
  `{ name: r5, effect: deny, when: "request.era == '2024-11-05' && component.kind == 'tool'" }`,
  `{ name: r6, effect: deny, when: "component.upstream == 'secrets'" }`,
  `{ name: r7, effect: allow, when: "principal.iss == '${issuer}'" }`,
  `{ name: r8, effect: allow, when: "component.kind == 'resource' && component.name.startsWith('docs://')" }`,
  `{ name: r9, effect: deny, when: "has(principal.claims.blocked) && principal.claims.blocked == true" }`,
  `{ name: r10, effect: deny, when: "request.mount == 'internal' && !('admin' in principal.scopes)" }`,
];

const dir = mkdtempSync(join(tmpdir(), 'swy-bench-identity-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const systems = [];
for (const id of ['plain', 'auth+policy']) {
  const port = await freePort();
  const file = join(dir, `${id}.yaml`);
  const extra =
    id === 'plain'
      ? ''
      : `auth:\n  bearer: { issuer: '${issuer}', scopes: [mcp] }\npolicy:\n  default: allow\n  rules:\n${RULES.map((r) => `    - ${r}`).join('\n')}\n`;
  writeFileSync(
    file,
    `listen: { port: ${port} }\nlogLevel: warn\nlimits: { maxConnections: 8192 }\n${extra}upstreams:\n  demo: { transport: embedded, path: /mcp }\n`,
  );
  const proc = start(`switchyard ${id}`, process.execPath, [SWITCHYARD, '--config', file, '--no-admin']);
  const url = `http://127.0.0.1:${port}/mcp`;
  const token = await new SignJWT({ scope: 'mcp', client_id: 'bench' })
    .setProtectedHeader({ alg: 'RS256', kid: 'bench', typ: 'at+jwt' })
    .setIssuer(issuer)
    .setSubject('alice')
    .setAudience(url)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(privateKey);
  const req = modernRequest('tools/call');
  if (id !== 'plain') req.headers.authorization = `Bearer ${token}`;
  await waitFor(() => probe(url, 'modern', req, id).then(() => true), { what: `${id} answering`, proc });
  systems.push({ id, url, req, proc, rps: [], cpuUsPerReq: [] });
}

const run = (s, seconds) =>
  cannon({ url: s.url, headers: s.req.headers, body: s.req.body, connections: CFG.connections, seconds, expect: expectOf('tools/call') });
for (const s of systems) await run(s, CFG.warmup);
for (let round = 0; round < CFG.rounds; round++) {
  // ABAB…, then BABA…: neither always runs first.
  for (const s of round % 2 === 0 ? systems : [...systems].reverse()) {
    const cpu0 = treeCpuUs(s.proc.pid);
    const r = await run(s, CFG.seconds);
    const cpu = (treeCpuUs(s.proc.pid) - cpu0) / r.ok;
    if (r.bad > 0) throw new Error(`${s.id}: ${r.bad} failed answers`);
    s.rps.push(r.rps);
    s.cpuUsPerReq.push(cpu);
    process.stderr.write(`${s.id.padEnd(12)} round ${round + 1}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, ${cpu.toFixed(1)} µs CPU/request\n`);
  }
}
const [plain, guarded] = systems.map((s) => median(s.rps));
const [plainCpu, guardedCpu] = systems.map((s) => median(s.cpuUsPerReq));
const cost = 1 - guarded / plain;
// On a shared machine throughput swings with the neighbours; CPU per request of the gateway's own
// process does not, and bounds its throughput: 1 - plainCpu / guardedCpu is the same cost.
const cpuCost = 1 - plainCpu / guardedCpu;
process.stdout.write(
  `${JSON.stringify({
    request: '2026-07-28 tools/call echo, demo',
    connections: CFG.connections,
    rounds: CFG.rounds,
    seconds: CFG.seconds,
    plainRps: Math.round(plain),
    authPolicyRps: Math.round(guarded),
    costPercent: Number((cost * 100).toFixed(1)),
    plainCpuUsPerRequest: Number(plainCpu.toFixed(1)),
    authPolicyCpuUsPerRequest: Number(guardedCpu.toFixed(1)),
    cpuCostPercent: Number((cpuCost * 100).toFixed(1)),
    target: 'at most 10%',
  })}\n`,
);
for (const s of systems) await s.proc.stop();
as.close();
process.exit(Math.min(cost, cpuCost) <= 0.1 ? 0 : 1);
