// The image definitions and the Compose file, checked without a Docker engine: the Dockerfiles are parsed
// (stages, FROM, COPY, USER), every COPY source must exist in the repository and survive the Dockerfile's
// own ignore file, and temporal-dev.yml (read by Helm's YAML reader, as the chart test does) must build
// from those Dockerfiles, with restart policies and health checks.
import { execFile, execFileSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOCKER = path.join(ROOT, 'deploy/docker');
const STACK_DIR = process.env.STACK_DIR ?? path.join(ROOT, '.stack');
const PYTHON = existsSync(path.join(STACK_DIR, 'venv/bin/python'))
  ? path.join(STACK_DIR, 'venv/bin/python')
  : 'python3';

interface Instruction {
  op: string;
  args: string;
  line: number;
}
interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Instructions of a Dockerfile: continuation lines joined, comments and parser directives dropped. */
function parseDockerfile(text: string): { args: Record<string, string>; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (!pending && (/^\s*#/.test(line) || !line.trim())) return;
    if (pending && /^\s*#/.test(line)) return; // comments inside a continued RUN
    if (!pending) start = i + 1;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^(\w+)\s+([\s\S]*)$/.exec(full);
    if (!m) throw new Error(`line ${start}: cannot parse '${full}'`);
    instructions.push({ op: m[1].toUpperCase(), args: m[2], line: start });
  });
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const m = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new Error(`line ${ins.line}: FROM ${ins.args}`);
      stages.push({
        from: m[1].replace(/\$\{(\w+)\}/g, (_, a: string) => args[a] ?? `\${${a}}`),
        name: m[2],
        instructions: [],
      });
    } else if (stages.length === 0) {
      if (ins.op !== 'ARG') throw new Error(`line ${ins.line}: ${ins.op} before FROM`);
      const [k, v] = ins.args.split('=');
      args[k] = v;
    } else {
      stages[stages.length - 1].instructions.push(ins);
    }
  }
  return { args, stages };
}

interface Copy {
  from?: string;
  sources: string[];
  dest: string;
}
function copiesOf(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.op === 'COPY' || i.op === 'ADD')
    .map((i) => {
      const words = i.args.split(/\s+/);
      const flags = words.filter((w) => w.startsWith('--'));
      const paths = words.filter((w) => !w.startsWith('--'));
      return {
        from: flags.find((f) => f.startsWith('--from='))?.slice(7),
        sources: paths.slice(0, -1),
        dest: paths[paths.length - 1],
      };
    });
}

// ── .dockerignore semantics: patterns match a path or any of its parents; the last match decides. ──
function globRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
function ignoredBy(ignoreFile: string): (rel: string) => boolean {
  const rules = readFileSync(ignoreFile, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const exception = l.startsWith('!');
      const pattern = path.posix.normalize((exception ? l.slice(1) : l).replace(/^\/+/, '')).replace(/\/+$/, '');
      return { exception, re: globRegex(pattern) };
    });
  return (rel: string) => {
    const parts = rel.split('/');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const r of rules) if (candidates.some((c) => r.re.test(c))) ignored = !r.exception;
    return ignored;
  };
}

/** Repository files a COPY source names (a file, a folder's files, or a glob), relative to ROOT. */
function filesOf(source: string): string[] {
  const walk = (rel: string): string[] => {
    const abs = path.join(ROOT, rel);
    if (!existsSync(abs)) return [];
    if (!statSync(abs).isDirectory()) return [rel];
    return readdirSync(abs)
      .filter((f) => !['node_modules', '.git', '.stack'].includes(f))
      .flatMap((f) => walk(rel === '.' ? f : `${rel}/${f}`));
  };
  if (!/[*?]/.test(source)) return walk(source.replace(/\/+$/, '') || '.');
  const dir = path.posix.dirname(source);
  const re = globRegex(path.posix.basename(source));
  return existsSync(path.join(ROOT, dir))
    ? readdirSync(path.join(ROOT, dir))
        .filter((f) => re.test(f))
        .map((f) => `${dir}/${f}`)
    : [];
}

const dockerfiles = ['service.Dockerfile', 'driver.Dockerfile'];
const parsed = Object.fromEntries(
  dockerfiles.map((f) => [f, parseDockerfile(readFileSync(path.join(DOCKER, f), 'utf8'))]),
);
const lastUser = (s: Stage) => s.instructions.filter((i) => i.op === 'USER').at(-1)?.args;
const stageNamed = (file: string, name: string) => parsed[file].stages.find((s) => s.name === name)!;
/** FROM names that are neither earlier stages nor pinned images: build contexts the caller must pass. */
const namedContexts = (file: string) => {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const s of parsed[file].stages) {
    if (!seen.has(s.from) && !s.from.includes(':') && !s.from.includes('/')) out.push(s.from);
    if (s.name) seen.add(s.name);
  }
  return out;
};

describe('Dockerfiles', () => {
  it.each(dockerfiles)('%s: every COPY source exists and is in the build context', (file) => {
    const ignored = ignoredBy(path.join(DOCKER, `${file}.dockerignore`));
    const problems: string[] = [];
    let copies = 0;
    for (const stage of parsed[file].stages) {
      for (const c of copiesOf(stage)) {
        if (c.from) continue;
        for (const src of c.sources) {
          copies++;
          const files = filesOf(src);
          if (files.length === 0) problems.push(`${src}: not in the repository`);
          else if (files.every(ignored)) problems.push(`${src}: excluded by ${file}.dockerignore`);
          else if (!/[*?]/.test(src) && src !== '.' && statSync(path.join(ROOT, src)).isFile() && ignored(src))
            problems.push(`${src}: excluded`);
        }
      }
    }
    expect(copies).toBeGreaterThan(2);
    expect(problems).toEqual([]);
  });

  it.each(dockerfiles)('%s: stages and images resolve, images are pinned', (file) => {
    const { stages } = parsed[file];
    const names = new Set<string>();
    for (const s of stages) {
      if (s.from.includes(':') || s.from.includes('/')) {
        expect(s.from, `FROM ${s.from}`).toMatch(/^[\w./-]+:[\w.-]+$/);
        expect(s.from).not.toMatch(/:latest$/);
      }
      for (const c of copiesOf(s))
        if (c.from) expect(names.has(c.from), `COPY --from=${c.from} in stage ${s.name}`).toBe(true);
      if (s.name) names.add(s.name);
    }
  });

  it('the service image builds dist/ and keeps only production dependencies, non-root, JSON logs', () => {
    const build = stageNamed('service.Dockerfile', 'build');
    expect(
      build.instructions.some(
        (i) =>
          i.op === 'RUN' &&
          /npm run build/.test(i.args) &&
          /dist\/api\.js/.test(i.args) &&
          /dist\/worker\.js/.test(i.args),
      ),
    ).toBe(true);
    expect(
      stageNamed('service.Dockerfile', 'deps').instructions.some(
        (i) => i.op === 'RUN' && /npm install --omit=dev/.test(i.args),
      ),
    ).toBe(true);
    const { stages } = parsed['service.Dockerfile'];
    const runtime = stages.at(-1)!;
    expect(runtime.name).toBe('runtime');
    for (const s of [runtime, stageNamed('service.Dockerfile', 'runtime-spark')]) {
      expect(lastUser(s)).toBe('185:185');
      const copied = copiesOf(s).map((c) => `${c.from ?? ''}:${c.sources.join(',')}`);
      expect(copied).toEqual(
        expect.arrayContaining([
          'deps:/app/node_modules',
          'build:/app/dist',
          ':package.json',
          ':deploy/docker/healthcheck.mjs',
        ]),
      );
      expect(s.instructions.some((i) => i.op === 'ENV' && /LOG_FORMAT=json/.test(i.args))).toBe(true);
    }
    expect(runtime.instructions.find((i) => i.op === 'CMD')?.args).toBe('["node", "dist/api.js"]');
    // package.json must say "type": "module" for node to load dist/ as ES modules.
    expect(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).type).toBe('module');
    expect(namedContexts('service.Dockerfile')).toEqual(['spark-driver']);
  });

  it('the driver image has the runner, only its runtime Python packages and the jars, as uid 185', () => {
    const driver = stageNamed('driver.Dockerfile', 'driver');
    expect(driver.from).toBe('apache/spark:3.5.7-python3');
    expect(lastUser(driver)).toBe('185:185');
    expect(parsed['driver.Dockerfile'].stages.at(-1)).toBe(driver);
    const dests = copiesOf(driver).map((c) => c.dest);
    expect(dests).toEqual(
      expect.arrayContaining([
        '/opt/spark-orchestrator/runner/runner.py',
        '/opt/spark-orchestrator/runner/spark_runner/',
        '/opt/spark/jars/',
      ]),
    );
    // The same selection the RUN step makes from runner/requirements.txt.
    const install = driver.instructions.find((i) => i.op === 'RUN' && i.args.includes('requirements'))!.args;
    const pattern = new RegExp(/grep -E '([^']+)'/.exec(install)![1]);
    const picked = readFileSync(path.join(ROOT, 'runner/requirements.txt'), 'utf8')
      .split('\n')
      .filter((l) => pattern.test(l))
      .map((l) => l.replace(/\s*#.*$/, ''));
    expect(picked.map((l) => l.split('==')[0])).toEqual(['temporalio', 'ilum-job-api']);
    expect(install).toContain(`-eq ${picked.length}`);
  });

  it('the driver jars match the Hadoop inside Spark 3.5.7', () => {
    const pom = readFileSync(path.join(DOCKER, 'driver-jars.pom.xml'), 'utf8');
    const deps = [
      ...pom.matchAll(/<groupId>([^<]+)<\/groupId>\s*<artifactId>([^<]+)<\/artifactId>\s*<version>([^<]+)<\/version>/g),
    ].map((m) => `${m[1]}:${m[2]}:${m[3]}`);
    expect(deps).toEqual(
      expect.arrayContaining([
        'cloud.ilum:ilum-job-api:6.0.0',
        'org.apache.hadoop:hadoop-aws:3.3.4',
        'com.amazonaws:aws-java-sdk-bundle:1.12.262',
      ]),
    );
    // pyspark 3.5.7 (runner/requirements.txt) ships the same Spark jars as the image.
    expect(readFileSync(path.join(ROOT, 'runner/requirements.txt'), 'utf8')).toMatch(/^pyspark==3\.5\.7\b/m);
    const venvLib = path.join(STACK_DIR, 'venv/lib');
    const jars = existsSync(venvLib)
      ? readdirSync(venvLib).flatMap((py) => {
          const d = path.join(venvLib, py, 'site-packages/pyspark/jars');
          return existsSync(d) ? readdirSync(d) : [];
        })
      : [];
    expect(jars, 'pyspark jars (run scripts/setup.sh)').toContain('hadoop-client-api-3.3.4.jar');
  });

  it('the ignore-file matcher follows Docker: parents match, the last rule wins', () => {
    const ignored = ignoredBy(path.join(DOCKER, 'driver.Dockerfile.dockerignore'));
    expect(ignored('runner/runner.py')).toBe(false);
    expect(ignored('runner/spark_runner/main.py')).toBe(false);
    expect(ignored('runner/spark_runner/__pycache__/main.cpython-311.pyc')).toBe(true);
    expect(ignored('runner/tests/test_state.py')).toBe(true);
    expect(ignored('package.json')).toBe(true);
    const service = ignoredBy(path.join(DOCKER, 'service.Dockerfile.dockerignore'));
    expect(service('node_modules/koa/package.json')).toBe(true);
    expect(service('api/main.ts')).toBe(false);
    expect(service('lib/log.ts')).toBe(false);
    expect(service('package-lock.json')).toBe(false);
  });
});

describe('temporal-dev.yml', () => {
  let services: Record<string, any>;
  beforeAll(() => {
    const yml = readFileSync(path.join(ROOT, 'temporal-dev.yml'), 'utf8');
    const out = execFileSync(PYTHON, [path.join(ROOT, 'deploy/helm/render.py'), 'yaml', '-'], {
      input: yml,
      env: { ...process.env, PYTHONPATH: path.join(STACK_DIR, 'helm-sdk') },
      encoding: 'utf8',
    });
    services = JSON.parse(out)[0].services;
  });

  it('gives every long-running service a restart policy and a health check; one-shot services restart "no"', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'driver', 'mongo', 'temporal', 'worker']);
    for (const [name, s] of Object.entries(services)) {
      expect(s.restart, name).toMatch(/^(unless-stopped|always|on-failure|no)$/);
      if (s.restart === 'no') continue;
      expect(Array.isArray(s.healthcheck?.test) && s.healthcheck.test[0] === 'CMD', `${name} healthcheck`).toBe(true);
    }
  });

  it('builds the three images from the Dockerfiles and targets that exist, and uses them', () => {
    const built = Object.fromEntries(
      Object.entries(services)
        .filter(([, s]) => s.build)
        .map(([n, s]) => [n, s]),
    );
    expect(Object.keys(built).sort()).toEqual(['api', 'driver', 'worker']);
    for (const [name, s] of Object.entries(built)) {
      const file = path.basename(s.build.dockerfile);
      expect(existsSync(path.join(ROOT, s.build.dockerfile)), name).toBe(true);
      expect(s.build.context).toBe('.');
      if (s.build.target) expect(stageNamed(file, s.build.target), `${name} target`).toBeTruthy();
      // Named contexts the Dockerfile needs come from another service's image.
      for (const ctx of namedContexts(file).filter(
        (c) => !s.build.target || c === stageNamed(file, s.build.target).from,
      )) {
        expect(s.build.additional_contexts?.[ctx], `${name}: context ${ctx}`).toMatch(/^service:/);
        expect(services[s.build.additional_contexts[ctx].slice('service:'.length)]).toBeTruthy();
      }
    }
    expect(services.worker.build.target).toBe('runtime-spark');
    expect(services.api.build.target).toBe('runtime');
    expect(services.worker.command).toEqual(['node', 'dist/worker.js']);
    expect(services.api.command).toEqual(['node', 'dist/api.js']);
    expect(services.worker.environment.K8S_SPARK_IMAGE).toBe(services.driver.image);
    expect(services.api.volumes).toEqual(services.worker.volumes);
  });

  it('starts services after what they depend on is healthy (or, for one-shots, done)', () => {
    for (const [name, s] of Object.entries(services)) {
      for (const [dep, cond] of Object.entries((s.depends_on ?? {}) as Record<string, { condition: string }>)) {
        expect(services[dep], `${name} → ${dep}`).toBeTruthy();
        if (cond.condition === 'service_healthy')
          expect(services[dep].healthcheck, `${dep} has a health check`).toBeTruthy();
        if (cond.condition === 'service_completed_successfully') expect(services[dep].restart).toBe('no');
      }
    }
    expect(services.api.depends_on).toMatchObject({
      temporal: { condition: 'service_healthy' },
      mongo: { condition: 'service_healthy' },
    });
  });
});

describe('healthcheck.mjs', () => {
  const check = async (mode: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> => {
    try {
      await promisify(execFile)(process.execPath, [path.join(DOCKER, 'healthcheck.mjs'), mode], {
        env: { ...process.env, ...env },
        timeout: 10_000,
      });
      return { code: 0, stderr: '' };
    } catch (e) {
      const err = e as { code?: number; stderr?: string };
      return { code: err.code ?? -1, stderr: err.stderr ?? '' };
    }
  };

  it('api: healthy on 200 from /api/v1/health, unhealthy on 503 or nothing listening; worker: Temporal port reachable', async () => {
    let status = 200;
    const server = http.createServer((req, res) => {
      res.statusCode = req.url === '/api/v1/health' ? status : 404;
      res.end('{"status":"DEGRADED"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = String((server.address() as AddressInfo).port);
    try {
      expect(await check('api', { API_PORT: port })).toEqual({ code: 0, stderr: '' });
      expect(await check('worker', { TEMPORAL_ADDRESS: `127.0.0.1:${port}` })).toEqual({ code: 0, stderr: '' });
      status = 503;
      const degraded = await check('api', { API_PORT: port });
      expect(degraded.code).toBe(1);
      expect(degraded.stderr).toContain('health answered 503');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect((await check('api', { API_PORT: port })).code).toBe(1);
    expect((await check('worker', { TEMPORAL_ADDRESS: `127.0.0.1:${port}` })).code).toBe(1);
    expect((await check('nonsense', {})).code).toBe(2);
  });
});
