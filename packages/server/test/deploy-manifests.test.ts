// The deployment files (issue 29 item 2; docs/deploy.md): the Kubernetes manifests against the
// Kubernetes API schemas (kubernetes-models: the OpenAPI schemas of the API as validators, plus its
// TypeScript types for unknown fields, which the API server refuses under strict field validation),
// and how the manifests, compose.yaml, the nginx configuration and the Dockerfile fit together.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const K8S = join(ROOT, 'deploy/kubernetes');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** kind → the model that validates it, and the TypeScript type the strict check assigns it to. */
const MODELS: Record<string, { apiVersion: string; model: new (data: any) => { validate(): void }; type: string; from: string }> = {
  Namespace: { apiVersion: 'v1', model: Namespace, type: 'INamespace', from: 'kubernetes-models/v1' },
  ConfigMap: { apiVersion: 'v1', model: ConfigMap, type: 'IConfigMap', from: 'kubernetes-models/v1' },
  Secret: { apiVersion: 'v1', model: Secret, type: 'ISecret', from: 'kubernetes-models/v1' },
  Service: { apiVersion: 'v1', model: Service, type: 'IService', from: 'kubernetes-models/v1' },
  Deployment: { apiVersion: 'apps/v1', model: Deployment, type: 'IDeployment', from: 'kubernetes-models/apps/v1' },
  Ingress: { apiVersion: 'networking.k8s.io/v1', model: Ingress, type: 'IIngress', from: 'kubernetes-models/networking.k8s.io/v1' },
  PodDisruptionBudget: { apiVersion: 'policy/v1', model: PodDisruptionBudget, type: 'IPodDisruptionBudget', from: 'kubernetes-models/policy/v1' },
};

interface Manifest { file: string; doc: any }
const files = readdirSync(K8S).filter((f) => f.endsWith('.yaml')).sort();
const manifests: Manifest[] = files.filter((f) => f !== 'kustomization.yaml').flatMap((file) => parseAllDocuments(readFileSync(join(K8S, file), 'utf8')).map((d) => {
  if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
  return { file, doc: d.toJS() };
}));
const one = (kind: string) => {
  const found = manifests.filter((m) => m.doc.kind === kind);
  expect(found, `one ${kind} in deploy/kubernetes`).toHaveLength(1);
  return found[0]!.doc;
};

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('every document is a known kind at its API version and valid against the Kubernetes schema', () => {
    expect(manifests.map((m) => m.doc.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'Ingress', 'Namespace', 'PodDisruptionBudget', 'Secret', 'Service']);
    for (const { file, doc } of manifests) {
      const entry = MODELS[doc.kind];
      expect(entry, `${file}: kind ${doc.kind}`).toBeDefined();
      expect(doc.apiVersion, `${file}: apiVersion`).toBe(entry!.apiVersion);
      expect(() => new entry!.model(doc).validate(), `${file} (${doc.kind})`).not.toThrow();
      expect(doc.metadata.namespace ?? (doc.kind === 'Namespace' ? undefined : 'missing'), `${file}: namespace`).toBe(doc.kind === 'Namespace' ? undefined : 'codeloom');
    }
  });

  it('the validation rejects a broken manifest (the check can fail)', () => {
    const deployment = structuredClone(one('Deployment'));
    deployment.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    expect(() => new Deployment(deployment).validate()).toThrow(/containerPort/);
    delete deployment.spec.selector;
    expect(() => new Deployment(deployment).validate()).toThrow(/selector/);
  });

  it('no document has a field the API does not know (strict field validation, checked by the types with tsc)', () => {
    const dir = join(ROOT, '.test-output/deploy-manifests');
    mkdirSync(dir, { recursive: true });
    const source = (docs: Manifest[]) => [
      ...new Set(docs.map(({ doc }) => `import type { ${MODELS[doc.kind]!.type} } from '${MODELS[doc.kind]!.from}';`)),
      ...docs.map(({ file, doc }, i) => `// ${file}\nexport const m${i}: ${MODELS[doc.kind]!.type} = ${JSON.stringify(doc, null, 2)};`),
      '',
    ].join('\n');
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: true, types: [] }, files: ['manifests.ts'] }));
    const tsc = (docs: Manifest[]) => {
      writeFileSync(join(dir, 'manifests.ts'), source(docs));
      return spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    };
    const ok = tsc(manifests);
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    // A misspelt field is caught.
    const typo = structuredClone(manifests.find((m) => m.doc.kind === 'Deployment')!);
    typo.doc.spec.template.spec.containers[0].readinesProbe = typo.doc.spec.template.spec.containers[0].readinessProbe;
    const bad = tsc([typo]);
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/readinesProbe/);
  }, 60_000);

  it('the Deployment: probes on /healthz and /readyz, non-root, read-only root, resources, a drain that fits its grace period', () => {
    const config = one('ConfigMap');
    const deployment = one('Deployment');
    const pod = deployment.spec.template.spec;
    const [c] = pod.containers;
    expect(pod.containers).toHaveLength(1);
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'http' });
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'http' });
    expect(c.startupProbe.httpGet.path).toBe('/healthz');
    expect(c.ports).toEqual([expect.objectContaining({ name: 'http', containerPort: Number(config.data.PORT) })]);
    expect(config.data.HOST).toBe('0.0.0.0');
    expect(config.data.CODELOOM_TRUST_PROXY).toBe('true');
    expect(config.data.CODELOOM_PUBLIC_URL).toMatch(/^https:\/\//);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(c.volumeMounts.map((v: any) => v.mountPath).sort()).toEqual(['/data', '/tmp']);
    for (const kind of ['requests', 'limits']) for (const r of ['cpu', 'memory']) expect(c.resources[kind][r], `${kind}.${r}`).toBeTruthy();
    expect(c.envFrom).toEqual([{ configMapRef: { name: config.metadata.name } }, { secretRef: { name: one('Secret').metadata.name } }]);
    const preStop = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(c.lifecycle.preStop.exec.command.join(' '))![1]) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + Number(config.data.CODELOOM_SHUTDOWN_TIMEOUT));
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('Service, PodDisruptionBudget and Ingress select the Deployment\'s pods; the Ingress streams unbuffered', () => {
    const deployment = one('Deployment');
    const labels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(labels);
    const service = one('Service');
    expect(labels).toMatchObject(service.spec.selector);
    expect(service.spec.ports[0].targetPort).toBe('http');
    const pdb = one('PodDisruptionBudget');
    expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    const ingress = one('Ingress');
    const backend = ingress.spec.rules[0].http.paths[0].backend.service;
    expect(backend.name).toBe(service.metadata.name);
    expect(service.spec.ports.map((p: any) => p.name)).toContain(backend.port.name);
    expect(ingress.metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600',
    });
    expect(ingress.spec.tls[0].hosts).toEqual([ingress.spec.rules[0].host]);
    expect(`https://${ingress.spec.rules[0].host}`).toBe(one('ConfigMap').data.CODELOOM_PUBLIC_URL);
  });

  it('the Secret is an example with no real secret, and kustomization.yaml applies everything else', () => {
    const secret = one('Secret');
    expect(manifests.find((m) => m.doc.kind === 'Secret')!.file).toBe('secret.example.yaml');
    expect(Object.keys(secret.stringData).sort()).toEqual(['CODELOOM_SECRET_KEY', 'DATABASE_URL', 'REDIS_URL']);
    expect(secret.stringData.CODELOOM_SECRET_KEY).toContain('REPLACE-ME');
    expect(secret.stringData.DATABASE_URL).toContain('REPLACE-ME');
    const kustomization = parse(readFileSync(join(K8S, 'kustomization.yaml'), 'utf8'));
    expect(kustomization.kind).toBe('Kustomization');
    expect([...kustomization.resources].sort()).toEqual(files.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml'));
    expect(kustomization.resources[0]).toBe('namespace.yaml');
  });
});

describe('compose.yaml, the nginx configuration and the Dockerfile', () => {
  const compose = parse(read('compose.yaml'), { merge: true }); // `<<: *codeloom` as compose reads it
  const nginx = read('deploy/nginx/codeloom.conf');
  const dockerfile = read('Dockerfile');
  const instances = Object.keys(compose.services).filter((s) => s.startsWith('codeloom-'));

  it('compose.yaml: PostgreSQL, Redis, three Codeloom instances on both, behind one proxy', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['codeloom-1', 'codeloom-2', 'codeloom-3', 'postgres', 'proxy', 'redis']);
    for (const name of instances) {
      const s = compose.services[name];
      expect(s.build).toEqual({ context: '.', target: 'runtime' });
      expect(s.environment.DATABASE_URL).toMatch(/^postgres:\/\/codeloom:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/codeloom$/);
      expect(s.environment.REDIS_URL).toBe('redis://redis:6379');
      expect(s.environment.CODELOOM_TRUST_PROXY).toBe('true');
      // One key for every instance: deployments' API keys sealed by one are opened by the others.
      expect(s.environment.CODELOOM_SECRET_KEY).toBe('${CODELOOM_SECRET_KEY:-change-me}');
      expect(s.environment.CODELOOM_PUBLIC_URL).toMatch(/^\$\{CODELOOM_PUBLIC_URL:-http:\/\/localhost:8080\}$/);
      expect(parseInt(s.stop_grace_period, 10)).toBeGreaterThan(30);
      expect(s.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
      expect(s.ports, `${name} is reached through the proxy only`).toBeUndefined();
    }
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD).toBe('${POSTGRES_PASSWORD:-change-me}');
    expect(compose.services.proxy.volumes).toEqual(['./deploy/nginx/codeloom.conf:/etc/nginx/conf.d/default.conf:ro']);
    expect(compose.services.proxy.ports).toEqual(['${CODELOOM_PORT:-8080}:8080']);
  });

  it('nginx: one upstream of exactly the compose instances, WebSocket upgrade, SSE unbuffered, long timeouts', () => {
    const upstream = /upstream codeloom \{([^}]*)\}/.exec(nginx)![1]!;
    expect([...upstream.matchAll(/server ([\w-]+):8080/g)].map((m) => m[1])).toEqual(instances);
    const directives = nginx.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
    for (const d of ['listen 8080;', 'proxy_pass http://codeloom;', 'proxy_http_version 1.1;', 'proxy_set_header Upgrade $http_upgrade;',
      'proxy_set_header Connection $connection_upgrade;', 'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
      'proxy_set_header X-Forwarded-Proto $scheme;', 'proxy_buffering off;', 'proxy_cache off;', 'gzip off;',
      'proxy_connect_timeout 2s;', 'proxy_next_upstream error timeout http_503;']) expect(directives).toContain(d);
    expect(nginx).toMatch(/map \$http_upgrade \$connection_upgrade \{\s*default upgrade;\s*'' +'';\s*\}/);
    expect(Number(/proxy_read_timeout (\d+)s;/.exec(nginx)![1])).toBeGreaterThanOrEqual(600);
    // Braces balance (a stray one stops nginx at start).
    expect(nginx.replace(/#.*/g, '').split('{').length).toBe(nginx.replace(/#.*/g, '').split('}').length);
  });

  it('Dockerfile: BASE_IMAGE defaults to node:20-bookworm-slim; runtime is the last (default) stage; non-root, healthcheck, SIGTERM, exec form', () => {
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:20-bookworm-slim$/m);
    const stages = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => [m[1], m[2]]);
    expect(stages).toEqual([['${BASE_IMAGE}', 'builder'], ['${BASE_IMAGE}', 'base'], ['builder', 'verify-tools'], ['base', 'verify'], ['base', 'runtime']]);
    const base = dockerfile.slice(dockerfile.indexOf('AS base'), dockerfile.indexOf('AS verify-tools'));
    expect(base).toMatch(/^USER 10001:10001$/m);
    expect(base).toMatch(/HOST=0\.0\.0\.0/);
    expect(base).toMatch(/^VOLUME \["\/data"\]$/m);
    expect(base).toMatch(/^HEALTHCHECK .*\n\s+CMD \["node", "-e", "fetch\('http:\/\/127\.0\.0\.1:'.*\/healthz'\)/m);
    expect(base).toMatch(/^STOPSIGNAL SIGTERM$/m);
    expect(base).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(base).toMatch(/^CMD \["node", .*"packages\/server\/dist\/main\.js"\]$/m);
    expect(base).not.toMatch(/npm ci|npm install/); // dependencies come from the builder, pruned to production
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
    const verify = dockerfile.slice(dockerfile.indexOf('# verify: '), dockerfile.indexOf('AS runtime'));
    expect(verify).toMatch(/bubblewrap/);
    expect(verify).toMatch(/python3/);
    expect(verify).toMatch(/seccomp=unconfined/);
    expect(verify).toMatch(/systempaths=unconfined/);
    expect(verify).toMatch(/unmask=ALL/);
    expect(read('.dockerignore')).toMatch(/^\*\*\/node_modules$/m);
  });
});
