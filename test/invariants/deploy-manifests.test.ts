// deploy/compose and deploy/kubernetes: every YAML parses, and the pieces fit together (names,
// ports, probes, secrets, the config file) the way docs/scaling.md says. Docker and Kubernetes
// cannot run on the test machine, so these checks are structural (the upstream health check script
// alone runs, against a real server-everything).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { SwitchyardError } from '../../src/core/errors.js';
import { listMounts, loadConfig, validateConfig } from '../../src/config/load.js';
import { checkOpenListener } from '../../src/auth/open-listener.js';
import { authMounts } from '../../src/config/compile.js';
import { parseClusterKeys } from '../../src/cluster/seal.js';
import { REPO_ROOT } from '../helpers/gateway.js';
import { everythingHttp, freePort } from '../helpers/servers.js';

type Obj = Record<string, unknown>;
const DEPLOY = path.join(REPO_ROOT, 'deploy');

/** Every document of a YAML file, parsed strictly (merge keys on, as compose reads them); fails on any error or warning. */
function load(file: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true, prettyErrors: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const d of list) {
    assert.deepEqual(
      d.errors.map((e) => e.message),
      [],
      file,
    );
    assert.deepEqual(
      d.warnings.map((e) => e.message),
      [],
      file,
    );
  }
  return list.map((d) => d.toJS({ maxAliasCount: 100 }) as Obj).filter((d) => d !== null);
}

/** True when every label of `selector` is on `labels` (how a Service or PDB selects pods). */
const selects = (selector: unknown, labels: unknown): boolean =>
  Object.keys(selector as Obj).length > 0 && Object.entries(selector as Obj).every(([k, v]) => (labels as Obj)[k] === v);

const at = (o: unknown, ...keys: Array<string | number>): unknown =>
  keys.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

test('every YAML file under deploy/ parses without errors or warnings', () => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, name.name);
      if (name.isDirectory()) walk(p);
      else if (/\.ya?ml$/.test(name.name)) files.push(p);
    }
  };
  walk(DEPLOY);
  assert.ok(files.length >= 12, files.join(', '));
  for (const f of files) assert.ok(load(f).length >= 1, f);
});

test('the replica config: cluster section from the environment, listener and admin ports, and otherwise valid for the current schema', () => {
  const [config] = load(path.join(DEPLOY, 'compose/switchyard.yaml'));
  assert.deepEqual(config.cluster, { redis: '${SWITCHYARD_REDIS_URL}', key: '${SWITCHYARD_CLUSTER_KEY}' });
  assert.deepEqual(config.listen, { host: '0.0.0.0', port: 7600, path: '' });
  assert.deepEqual(config.admin, { host: '0.0.0.0', port: 7601 });
  // `admin` belongs to the admin listener, which is not in the schema yet; everything else validates.
  const { admin: _a, ...rest } = config;
  const key = Buffer.alloc(32, 9).toString('base64');
  const env = { SWITCHYARD_UPSTREAM_URL: 'http://everything:3001/mcp', SWITCHYARD_REDIS_URL: 'redis://redis:6379', SWITCHYARD_CLUSTER_KEY: key };
  const valid = validateConfig(rest, 'deploy/compose/switchyard.yaml', { env });
  assert.deepEqual(Object.keys(valid.upstreams), ['everything']);
  assert.deepEqual(valid.cluster, { redis: 'redis://redis:6379', key, sessionMaxAgeMs: 86_400_000, readinessRequiresRedis: false });
  // Without the key the file does not validate (every replica must open the others' sealed state).
  assert.throws(() => validateConfig(rest, 'deploy/compose/switchyard.yaml', { env: { ...env, SWITCHYARD_CLUSTER_KEY: undefined } }), /SWITCHYARD_CLUSTER_KEY/);
});

test('the replica config starts on its 0.0.0.0 listener: the open-listener check passes (it was refused with SWY_ERR_AUTH_OPEN_LISTENER)', async () => {
  // The same check startGatewayFromConfig runs first, before anything binds, with the flags the
  // compose file and the Deployment pass (no --allow-unauthenticated).
  const key = Buffer.alloc(32, 9).toString('base64');
  const env = { SWITCHYARD_UPSTREAM_URL: 'http://everything:3001/mcp', SWITCHYARD_REDIS_URL: 'redis://redis:6379', SWITCHYARD_CLUSTER_KEY: key };
  const config = await loadConfig(path.join(DEPLOY, 'compose/switchyard.yaml'), { env });
  assert.equal(config.listen.host, '0.0.0.0');
  assert.doesNotThrow(() => checkOpenListener(config.listen.host, authMounts(config, listMounts(config)), false));
});

test('compose: redis, three replicas built from deploy/Dockerfile sharing one config and key, nginx in front', () => {
  const [compose] = load(path.join(DEPLOY, 'compose/compose.yaml'));
  const services = compose.services as Record<string, Obj>;
  assert.deepEqual(Object.keys(services).sort(), ['everything', 'nginx', 'redis', 'switchyard-1', 'switchyard-2', 'switchyard-3']);
  const dir = path.join(DEPLOY, 'compose');
  for (const name of ['switchyard-1', 'switchyard-2', 'switchyard-3']) {
    const s = services[name];
    const build = s.build as Obj;
    assert.ok(existsSync(path.join(path.resolve(dir, build.context as string), build.dockerfile as string)), `${name}: Dockerfile`);
    assert.equal(path.resolve(dir, build.context as string), REPO_ROOT);
    const env = s.environment as Obj;
    assert.match(env.SWITCHYARD_CLUSTER_KEY as string, /^\$\{SWITCHYARD_CLUSTER_KEY:\?.+\}$/);
    assert.equal(env.SWITCHYARD_REDIS_URL, 'redis://redis:6379');
    assert.deepEqual(s.volumes, ['./switchyard.yaml:/etc/switchyard/switchyard.yaml:ro']);
    assert.ok(existsSync(path.join(dir, 'switchyard.yaml')));
    assert.deepEqual(s.command, ['--config', '/etc/switchyard/switchyard.yaml']);
    assert.match(((s.healthcheck as Obj).test as string[]).join(' '), /http:\/\/127\.0\.0\.1:7601\/readyz/);
    assert.deepEqual(at(s, 'depends_on', 'redis'), { condition: 'service_healthy' });
    // Only nginx is published; replicas are reached through it.
    assert.equal(s.ports, undefined);
    assert.equal(s.read_only, true);
  }
  const redis = services.redis;
  assert.deepEqual((redis.command as string[]).slice(0, 5), ['redis-server', '--save', '', '--appendonly', 'no']);
  assert.ok((redis.command as string[]).includes('noeviction'));
  const nginx = services.nginx;
  assert.deepEqual(nginx.ports, ['8080:8080']);
  const [mount] = nginx.volumes as string[];
  const [src, dst] = mount.split(':');
  assert.equal(path.resolve(dir, src), path.join(DEPLOY, 'nginx/switchyard.conf'));
  assert.equal(dst, '/etc/nginx/conf.d/default.conf');
  // The nginx upstream block names exactly the replica services, on the listener port of the config.
  const conf = readFileSync(path.join(DEPLOY, 'nginx/switchyard.conf'), 'utf8');
  const servers = [...conf.matchAll(/^\s*server\s+([^\s;]+);/gm)].map((m) => m[1]);
  assert.deepEqual(servers, ['switchyard-1:7600', 'switchyard-2:7600', 'switchyard-3:7600']);
  const everything = services.everything;
  assert.deepEqual(everything.environment, { PORT: '3001' });
  assert.equal(at(services['switchyard-1'], 'environment', 'SWITCHYARD_UPSTREAM_URL'), 'http://everything:3001/mcp');
});

/** The Kubernetes objects of deploy/kubernetes, by kind/name. */
function kube(): Map<string, Obj> {
  const out = new Map<string, Obj>();
  const dir = path.join(DEPLOY, 'kubernetes');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.yaml') && n !== 'kustomization.yaml'))
    for (const o of load(path.join(dir, f))) {
      const key = `${o.kind as string}/${at(o, 'metadata', 'name') as string}`;
      assert.equal(out.has(key), false, `${key} defined twice`);
      out.set(key, o);
    }
  return out;
}

test('kubernetes: every object is in the switchyard namespace and listed in the kustomization', () => {
  const dir = path.join(DEPLOY, 'kubernetes');
  const objects = kube();
  assert.deepEqual([...objects.keys()].sort(), [
    'ConfigMap/switchyard-config',
    'Deployment/redis',
    'Deployment/switchyard',
    'HorizontalPodAutoscaler/switchyard',
    'Namespace/switchyard',
    'PodDisruptionBudget/switchyard',
    'Secret/switchyard-cluster',
    'Service/redis',
    'Service/switchyard',
  ]);
  for (const [key, o] of objects) if (o.kind !== 'Namespace') assert.equal(at(o, 'metadata', 'namespace'), 'switchyard', key);
  const [k] = load(path.join(dir, 'kustomization.yaml'));
  assert.deepEqual(
    [...(k.resources as string[])].sort(),
    readdirSync(dir)
      .filter((n) => n.endsWith('.yaml') && n !== 'kustomization.yaml')
      .sort(),
  );
});

test('kubernetes Deployment: probes on the admin port 7601, key from the Secret, config from the ConfigMap, non-root', () => {
  const objects = kube();
  const d = objects.get('Deployment/switchyard')!;
  assert.equal(at(d, 'apiVersion'), 'apps/v1');
  const labels = at(d, 'spec', 'template', 'metadata', 'labels') as Obj;
  assert.ok(selects(at(d, 'spec', 'selector', 'matchLabels'), labels));
  assert.ok((at(d, 'spec', 'replicas') as number) >= 2);
  const pod = at(d, 'spec', 'template', 'spec') as Obj;
  const [c] = pod.containers as Obj[];
  const ports: Record<string, unknown> = Object.fromEntries((c.ports as Obj[]).map((p) => [p.name, p.containerPort]));
  assert.deepEqual(ports, { http: 7600, admin: 7601 });
  const probePort = (probe: string) => {
    const p = at(c, probe, 'httpGet', 'port');
    return typeof p === 'string' ? (ports as Record<string, unknown>)[p] : p;
  };
  assert.equal(at(c, 'readinessProbe', 'httpGet', 'path'), '/readyz');
  assert.equal(probePort('readinessProbe'), 7601);
  assert.equal(at(c, 'livenessProbe', 'httpGet', 'path'), '/healthz');
  assert.equal(probePort('livenessProbe'), 7601);
  // The key reaches the container from the Secret, under a key the Secret has.
  const env = Object.fromEntries((c.env as Obj[]).map((e) => [e.name, e]));
  const secret = objects.get('Secret/switchyard-cluster')!;
  // The replica id is the pod name (unique per pod).
  assert.deepEqual(at(env.SWITCHYARD_REPLICA_ID, 'valueFrom', 'fieldRef'), { fieldPath: 'metadata.name' });
  for (const name of ['SWITCHYARD_CLUSTER_KEY', 'SWITCHYARD_REDIS_URL']) {
    const ref = at(env[name], 'valueFrom', 'secretKeyRef') as Obj;
    assert.equal(ref.name, 'switchyard-cluster');
    assert.ok(Object.hasOwn(secret.stringData as Obj, ref.key as string), name);
  }
  // The config file: the ConfigMap key, mounted where --config points.
  const args = c.args as string[];
  const configPath = args[args.indexOf('--config') + 1];
  const mount = (c.volumeMounts as Obj[]).find((m) => m.name === 'config')!;
  const volume = (pod.volumes as Obj[]).find((v) => v.name === 'config')!;
  assert.equal(at(volume, 'configMap', 'name'), 'switchyard-config');
  assert.equal(path.posix.join(mount.mountPath as string, 'switchyard.yaml'), configPath);
  assert.ok(Object.hasOwn(objects.get('ConfigMap/switchyard-config')!.data as Obj, 'switchyard.yaml'));
  // Not root, nothing writable but /tmp, no extra privileges.
  assert.equal(at(pod, 'securityContext', 'runAsNonRoot'), true);
  assert.notEqual(at(pod, 'securityContext', 'runAsUser'), 0);
  assert.equal(at(c, 'securityContext', 'readOnlyRootFilesystem'), true);
  assert.equal(at(c, 'securityContext', 'allowPrivilegeEscalation'), false);
  assert.deepEqual(at(c, 'securityContext', 'capabilities', 'drop'), ['ALL']);
  // Room for the preStop pause plus limits.shutdownGraceMs (5 s).
  assert.ok((pod.terminationGracePeriodSeconds as number) >= 5 + 5 + 1);
});

test('kubernetes Service, HPA and PDB select the Deployment; no session affinity', () => {
  const objects = kube();
  const labels = at(objects.get('Deployment/switchyard'), 'spec', 'template', 'metadata', 'labels') as Obj;
  const svc = objects.get('Service/switchyard')!;
  assert.ok(selects(at(svc, 'spec', 'selector'), labels));
  assert.equal(at(svc, 'spec', 'sessionAffinity'), 'None');
  assert.deepEqual(at(svc, 'spec', 'ports'), [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
  const hpa = objects.get('HorizontalPodAutoscaler/switchyard')!;
  assert.equal(at(hpa, 'apiVersion'), 'autoscaling/v2');
  assert.deepEqual(at(hpa, 'spec', 'scaleTargetRef'), { apiVersion: 'apps/v1', kind: 'Deployment', name: 'switchyard' });
  const min = at(hpa, 'spec', 'minReplicas') as number;
  assert.ok(min >= 2 && (at(hpa, 'spec', 'maxReplicas') as number) > min);
  const pdb = objects.get('PodDisruptionBudget/switchyard')!;
  assert.equal(at(pdb, 'apiVersion'), 'policy/v1');
  assert.ok(selects(at(pdb, 'spec', 'selector', 'matchLabels'), labels));
  assert.ok((at(pdb, 'spec', 'maxUnavailable') as number) < min);
  const redis = objects.get('Service/redis')!;
  assert.ok(selects(at(redis, 'spec', 'selector'), at(objects.get('Deployment/redis'), 'spec', 'template', 'metadata', 'labels')));
  assert.equal(selects(at(redis, 'spec', 'selector'), labels), false);
  assert.equal((at(objects.get('Secret/switchyard-cluster'), 'stringData', 'SWITCHYARD_REDIS_URL') as string).startsWith('redis://redis:6379'), true);
});

test('the ConfigMap carries exactly deploy/compose/switchyard.yaml', () => {
  const cm = kube().get('ConfigMap/switchyard-config')!;
  assert.equal((cm.data as Obj)['switchyard.yaml'], readFileSync(path.join(DEPLOY, 'compose/switchyard.yaml'), 'utf8'));
});

test('the Secret ships a placeholder that no replica accepts as a key', () => {
  const key = at(kube().get('Secret/switchyard-cluster'), 'stringData', 'SWITCHYARD_CLUSTER_KEY') as string;
  assert.throws(
    () => parseClusterKeys(key),
    (err: unknown) => err instanceof SwitchyardError && err.code === 'SWY_ERR_CONFIG_INVALID',
  );
});

test('compose: the replicas wait for the upstream health check, which passes on a real server-everything and fails when nothing listens', async (t) => {
  const [compose] = load(path.join(DEPLOY, 'compose/compose.yaml'));
  const services = compose.services as Record<string, Obj>;
  const check = services.everything.healthcheck as Obj;
  // npx downloads the server at its first start: the replicas must not start against a missing upstream.
  for (const name of ['switchyard-1', 'switchyard-2', 'switchyard-3'])
    assert.deepEqual(at(services[name], 'depends_on', 'everything'), { condition: 'service_healthy' }, name);
  assert.equal(check.start_period, '120s');
  const [kind, node, flag, script] = check.test as string[];
  assert.deepEqual([kind, node, flag], ['CMD', 'node', '-e']);
  assert.match(script, /http:\/\/127\.0\.0\.1:3001\/mcp/);
  // The same script, run against the real server on a free port (what the container runs on 3001).
  const run = (port: number): Promise<number | null> =>
    new Promise((resolve) =>
      execFile(process.execPath, ['-e', script.replace(':3001/', `:${port}/`)], { timeout: 10_000 }, (err) =>
        resolve(err ? ((err as { code?: number }).code ?? null) : 0),
      ),
    );
  const nothing = await freePort();
  assert.equal(await run(nothing), 1, 'nothing listening: unhealthy');
  const server = await everythingHttp(t, 'streamableHttp');
  assert.equal(await run(Number(new URL(server.url).port)), 0, 'server-everything listening: healthy');
});
