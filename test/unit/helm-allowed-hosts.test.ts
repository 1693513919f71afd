// The chart's Host and Origin settings (deploy/helm, rendered by Helm's own engine through deploy/helm/render.py):
// the API Service's own DNS names are always in ALLOWED_HOSTS, so in-cluster clients calling it by name pass
// the Host check; the names and origins of access.* follow, and the service's loader accepts the result.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STACK_DIR = process.env.STACK_DIR ?? path.join(ROOT, '.stack');
const PYTHON = existsSync(path.join(STACK_DIR, 'venv/bin/python'))
  ? path.join(STACK_DIR, 'venv/bin/python')
  : 'python3';
const REQUIRED = {
  secrets: { secretKey: 'a'.repeat(64), mongoUrl: 'mongodb://mongo-0.mongo:27017/?replicaSet=rs0' },
  auth: { adminKey: 'a-bootstrap-admin-key-of-at-least-32-chars' },
};

/** The data of the chart's ConfigMap for these values. */
function configMap(values: Record<string, unknown>): Record<string, string> {
  const out = execFileSync(
    PYTHON,
    [
      path.join(ROOT, 'deploy/helm/render.py'),
      'chart',
      path.join(ROOT, 'deploy/helm/spark-orchestrator'),
      'orch',
      'ns1',
    ],
    {
      input: JSON.stringify(values),
      env: { ...process.env, PYTHONPATH: path.join(STACK_DIR, 'helm-sdk') },
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  const r = JSON.parse(out) as { manifests: { object: Record<string, any> }[]; error?: string };
  if (r.error) throw new Error(r.error);
  return r.manifests
    .map((m) => m.object)
    .find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'orch-spark-orchestrator')!.data;
}

describe('the chart: ALLOWED_HOSTS and ALLOWED_ORIGINS', () => {
  const svc = 'orch-spark-orchestrator-api';
  const own = [svc, `${svc}.ns1`, `${svc}.ns1.svc`, `${svc}.ns1.svc.cluster.local`];

  it("always names the API Service's DNS names; no origin by default", () => {
    const data = configMap(REQUIRED);
    expect(data.ALLOWED_HOSTS.split(',')).toEqual(own);
    expect(data.ALLOWED_ORIGINS).toBe('');
  });

  it('adds the public names and origins of access.*, in a form the service accepts', () => {
    const data = configMap({
      ...REQUIRED,
      access: {
        allowedHosts: ['orchestrator.example.com', 'spark.example.com'],
        allowedOrigins: ['https://portal.example.com'],
      },
    });
    expect(data.ALLOWED_HOSTS.split(',')).toEqual([...own, 'orchestrator.example.com', 'spark.example.com']);
    expect(data.ALLOWED_ORIGINS).toBe('https://portal.example.com');
    const config = loadConfig({ ...data, SECRET_KEY: 'a'.repeat(64) });
    expect(config.ALLOWED_HOSTS).toBe(data.ALLOWED_HOSTS);
  });

  it('cannot be set through extraEnv', () => {
    expect(() => configMap({ ...REQUIRED, config: { extraEnv: { ALLOWED_HOSTS: 'x' } } })).toThrow(
      /config\.extraEnv\.ALLOWED_HOSTS/,
    );
  });
});
