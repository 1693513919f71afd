// Configuration, read once from the environment, typed and validated at start-up.
// Every setting and its default is listed here and in the README.
// Over 300 lines on purpose: one schema, so every setting and its default stand in one place (the README's
// table is checked against it by test/unit/docs-match-code.test.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A host name, IPv4 address or bracketed IPv6 address, without port (ALLOWED_HOSTS). */
const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?)$/i;

function hostEntryProblem(e: string): string | undefined {
  if (e === '*') return 'no wildcard: name each host';
  return HOST_ENTRY.test(e) ? undefined : `'${e}' is not a host name (no scheme, port or path; IPv6 in brackets)`;
}

function originEntryProblem(e: string): string | undefined {
  if (e === '*' || e === 'null') return `'${e}' is not allowed: name each origin (scheme://host[:port])`;
  try {
    const u = new URL(e);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin === e.replace(/\/$/, '')) return undefined;
  } catch {
    // reported below
  }
  return `'${e}' is not an origin: scheme://host[:port], http or https, no path`;
}

/** Checks each entry of a comma-separated setting; any bad entry stops the start, named in the message. */
const listOf = (problem: (entry: string) => string | undefined) => (value: string, ctx: z.RefinementCtx) => {
  for (const e of value.split(',').map((s) => s.trim())) {
    const p = e ? problem(e) : undefined;
    if (p) ctx.addIssue({ code: 'custom', message: p });
  }
};

const schema = z.object({
  /** Folder for the dev stack's venv, data, logs, artifacts and local drivers. */
  STACK_DIR: z.string().default(path.join(ROOT, '.stack')),
  /** Uploaded jars, files and pyFiles, one folder per job, group or schedule. Default: $STACK_DIR/artifacts. */
  ARTIFACT_DIR: z.string().optional(),
  /** Working folders (pid, exit code, logs) of drivers on local clusters. Default: $STACK_DIR/drivers. */
  DRIVER_DIR: z.string().optional(),
  /** HTTP port of the API. */
  API_PORT: z.coerce.number().int().min(0).max(65535).default(9888),
  /** Address the API binds. Loopback by default; any other address needs AUTH_MODE=on (see api/auth/binding.ts). */
  API_HOST: z.string().default('127.0.0.1'),
  /** Built web console (scripts/build-console.mjs), served at /console. Default: dist/console. */
  CONSOLE_DIR: z.string().default(path.join(ROOT, 'dist', 'console')),
  /** off: every call is anonymous with every role (loopback only); on: API keys and/or OIDC tokens required. */
  AUTH_MODE: z.enum(['off', 'on']).default('off'),
  /** Bootstrap admin API key (at least 32 characters), stored hashed as key id `bootstrap` at start-up. */
  AUTH_ADMIN_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  /** OIDC issuer whose bearer tokens (JWTs) are accepted; unset: API keys only. */
  OIDC_ISSUER: z.string().url().optional(),
  /** Required `aud` of tokens; must be set with OIDC_ISSUER (checked in loadConfig). */
  OIDC_AUDIENCE: z.string().optional(),
  /** JWKS of the issuer; unset: `jwks_uri` of $OIDC_ISSUER/.well-known/openid-configuration. */
  OIDC_JWKS_URL: z.string().url().optional(),
  /** Claim holding the role (a string or a list; dots reach into objects, e.g. realm_access.roles). */
  OIDC_ROLE_CLAIM: z.string().default('roles'),
  /** Claim values mapped to roles, `group=role;group2=role2`; a value named like a role always counts as it. */
  OIDC_ROLE_MAP: z.string().default(''),
  /** Public OIDC client id of the web console (authorization code + PKCE, no secret); unset or empty: no OIDC button. */
  OIDC_CONSOLE_CLIENT_ID: z.string().trim().max(256).optional(),
  /**
   * Host names (comma-separated, no port) both ports answer to besides loopback names (localhost, 127.0.0.1,
   * [::1]), the bound address and the address a connection arrived at; any other Host header is refused, so
   * a DNS name rebound to this server cannot drive it. Default empty. Set it to the public name(s) of an
   * ingress or load balancer.
   */
  ALLOWED_HOSTS: z.string().default('').superRefine(listOf(hostEntryProblem)),
  /**
   * Web origins (comma-separated, scheme://host[:port]) besides the API's own that may make state-changing
   * calls and open streams from a browser; they also get CORS headers. Default empty: only the API's own.
   */
  ALLOWED_ORIGINS: z.string().default('').superRefine(listOf(originEntryProblem)),
  /** Port and address of the Livy-compatible API (api/livy/); Livy's own port by default. */
  LIVY_PORT: z.coerce.number().int().min(0).max(65535).default(8998),
  LIVY_HOST: z.string().default('127.0.0.1'),
  /** Folders (comma-separated) whose files Livy batches and sessions may name as local paths; empty: none. */
  LIVY_LOCAL_DIRS: z.string().default(''),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  /** Task queue of the TypeScript worker (workflows and cluster-adapter activities). */
  TASK_QUEUE: z.string().default('spark-orchestrator'),
  /**
   * This worker's host: local clusters' drivers are processes and files of the host that launched them, so
   * every activity on such a driver runs on its host's own task queue (`<TASK_QUEUE>@<WORKER_HOST>`), which
   * each worker polls besides TASK_QUEUE. Workers sharing a DRIVER_DIR (one machine) share a host id.
   * Default: the machine's host name.
   */
  WORKER_HOST: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'letters, digits, ".", "_" and "-" only')
    .default(os.hostname()),
  /**
   * How long an activity on a driver's host may wait for a worker of that host to take it before the driver
   * is shown UNKNOWN with that cause (its schedule-to-start timeout); it resumes when the host comes back.
   */
  HOST_ABSENT_MS: z.coerce.number().int().min(1000).default(30_000),
  MONGO_URL: z.string().default('mongodb://127.0.0.1:27017/?directConnection=true'),
  MONGO_DB: z.string().default('spark_orchestrator'),
  /** 64 hex characters (AES-256 key) encrypting cluster secrets at rest. Dev default: $STACK_DIR/secret.key. */
  SECRET_KEY: z.string().optional(),
  /** Largest page size a list accepts. */
  MAX_PAGE_SIZE: z.coerce.number().int().min(1).default(1000),
  /** Largest `logSize` (lines per driver) of GET /job/{jobId}/logs; the Livy logs read up to this many. */
  LOGS_MAX_LINES: z.coerce.number().int().min(1).default(25000),
  /** Maximum scale of a group (402 above it). */
  MAX_GROUP_SCALE: z.coerce.number().int().min(1).default(16),
  /** Idle time after which an autoPause group stops its drivers. */
  GROUP_IDLE_PAUSE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(10 * 60_000),
  /**
   * The Spark History Server (loopback only) the API's history proxy calls: finished runs' UIs. The dev stack
   * starts it on this URL's port (scripts/history-server.ts).
   */
  SPARK_HISTORY_URL: z.url().default('http://127.0.0.1:18080'),
  /** The History Server's log folder: links to local drivers' event logs. Default: $STACK_DIR/spark-history. */
  SPARK_HISTORY_DIR: z.string().optional(),
  /** Threads of a local-mode driver: spark-submit --master local[N]. */
  LOCAL_SPARK_THREADS: z.coerce.number().int().min(1).default(2),
  /** Python with pyspark, temporalio and ilum-job-api (the runner's interpreter). */
  PYTHON: z.string().optional(),
  /** SPARK_HOME of the pip pyspark distribution. */
  SPARK_HOME: z.string().optional(),
  /**
   * Trino's install folder, for the TRINO SQL engines of local clusters (launched from its bin/). Default:
   * where scripts/setup.sh installs it, $SPARK_ORCH_CACHE (else $XDG_CACHE_HOME/spark-orchestrator, else
   * ~/.cache/spark-orchestrator)/trino-server-368; SKIP_TRINO=1 setups have none, and TRINO engines fail to launch.
   */
  TRINO_HOME: z.string().optional(),
  /** Tables and metastores of SPARK_SQL engines on local clusters, one folder per cluster. Default: $STACK_DIR/data/sql. */
  SQL_DATA_DIR: z.string().optional(),
  /** Spark container image and namespace of k8s clusters that set none of their own (`sparkImage`, `namespace`). */
  K8S_SPARK_IMAGE: z.string().default('apache/spark:3.5.7-python3'),
  K8S_NAMESPACE: z.string().default('default'),
  /** Trino image of the TRINO SQL engines of k8s clusters (368: the version local clusters run). */
  K8S_TRINO_IMAGE: z.string().default('trinodb/trino:368'),
  /** How often the watch activities poll a driver's state. */
  WATCH_INTERVAL_MS: z.coerce.number().int().min(10).default(500),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** host:port where the worker serves Prometheus metrics (/metrics); empty: none. The dev stack sets 127.0.0.1:9464. */
  WORKER_METRICS_ADDRESS: z.string().default(''),
  /** OTLP/HTTP endpoint traces are exported to (e.g. http://collector:4318); empty: no tracing. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().default(''),
  /** Service name on exported spans; each process appends its role (-api, -worker). */
  OTEL_SERVICE_NAME: z.string().default('spark-orchestrator'),
  /** An SQL engine with no statement for this long stops itself (Kyuubi's engine idle timeout). */
  SQL_ENGINE_IDLE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(30 * 60_000),
  /** How long an engine may take from launch to answering; also how long a first statement waits for it. */
  SQL_ENGINE_START_TIMEOUT_MS: z.coerce.number().int().min(1000).default(180_000),
  /** Largest maxRows a statement may ask for (402 above it). */
  SQL_MAX_ROWS: z.coerce.number().int().min(1).default(1_000_000),
  /** A statement running longer is cancelled in the engine (TIMEDOUT); a request may ask for less. */
  SQL_STATEMENT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(15 * 60_000),
  /**
   * Days after which the retention sweep removes what has ended: local driver folders (with their Spark
   * event logs), finished executions, finished job records with their uploaded artifacts, query-history
   * records, and the Livy API's records of those jobs and executions.
   */
  RETENTION_DAYS: z.coerce.number().positive().default(7),
  /** Days after which the retention sweep removes audit records. */
  AUDIT_RETENTION_DAYS: z.coerce.number().positive().default(90),
  /** Audit records written per principal per minute; the rest of that minute's are dropped and counted. */
  AUDIT_MAX_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Concurrent SSE streams resumed with Last-Event-ID (each its own change stream) per principal; 429 above. */
  STREAM_RESUMED_PER_PRINCIPAL: z.coerce.number().int().min(1).default(8),
  /** Bytes a stream client may leave unread (SSE and Socket.IO) before it is disconnected. */
  STREAM_MAX_BUFFERED_BYTES: z.coerce.number().int().min(16_384).default(1_048_576),
  /** Sessions each API process keeps open per engine; more concurrent statements queue for one. */
  SQL_SESSIONS_PER_ENGINE: z.coerce.number().int().min(1).max(256).default(16),
  /** Where the Spark Connect gateway (api/connect/) listens for `sc://host:port/;token=…` clients; 0: a free port. */
  CONNECT_PORT: z.coerce.number().int().min(0).max(65535).default(15002),
  CONNECT_HOST: z.string().default('127.0.0.1'),
  /** PEM certificate and key of the gateway's TLS (a pyspark client with a token speaks TLS). Default: the dev stack's, $STACK_DIR/connect-tls/. */
  CONNECT_TLS_CERT: z.string().optional(),
  CONNECT_TLS_KEY: z.string().optional(),
  /** A Connect server with no session for this long stops itself. */
  CONNECT_IDLE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(30 * 60_000),
  /** A Connect session with no call for this long is released (its next call fails, naming why). */
  CONNECT_SESSION_IDLE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(15 * 60_000),
  /** Active Connect sessions one principal may hold at once (RESOURCE_EXHAUSTED above). */
  CONNECT_SESSIONS_PER_PRINCIPAL: z.coerce.number().int().min(1).default(8),
  /** How long a Connect server may take from launch to listening (also how long a first session waits). */
  CONNECT_START_TIMEOUT_MS: z.coerce.number().int().min(1000).default(180_000),
  /** spark-connect_2.12-3.5.7.jar. Default: where scripts/setup-connect.sh puts it, in the cache beside Trino. */
  SPARK_CONNECT_JAR: z.string().optional(),
  /** A driver launch (or start) that has not succeeded within this long fails the attempt. */
  LAUNCH_DEADLINE_MS: z.coerce
    .number()
    .int()
    .min(100)
    .default(10 * 60_000),
  /**
   * Which clusters' single jobs the API launches itself right after the durable start of their workflow (the
   * workflow's own launch then finds the driver; a launch is idempotent per driverId): `all`, `k8s` (where the
   * API may run on other hosts than the workers: a local cluster's drivers belong on a worker's host), `off`.
   */
  LAUNCH_AT_SUBMIT: z.enum(['all', 'k8s', 'off']).default('all'),
  /** How long a group execution waits for a ready instance before answering 409 (longer than a driver's start). */
  EXECUTE_WAIT_MS: z.coerce.number().int().min(100).default(60_000),
  /** After this many consecutive drivers of a group failing before READY, the group stops replacing them. */
  CRASH_LOOP_LIMIT: z.coerce.number().int().min(1).default(5),
  /** First delay before replacing a driver that failed before READY; doubles with each further failure. */
  CRASH_BACKOFF_MS: z.coerce.number().int().min(0).default(2_000),
  /** Largest delay between replacements of failing drivers. */
  CRASH_BACKOFF_MAX_MS: z.coerce.number().int().min(0).default(60_000),
});

/** The name of every setting, in the order above. */
export const SETTINGS = Object.keys(schema.shape) as (keyof z.infer<typeof schema>)[];

export const OIDC_AUDIENCE_REQUIRED =
  'invalid configuration: OIDC_AUDIENCE: is required with OIDC_ISSUER (the `aud` your issuer puts in tokens for ' +
  'this service, often its client id)';

export type Config = z.infer<typeof schema> & {
  SECRET_KEY: string;
  PYTHON: string;
  SPARK_HOME: string;
  ARTIFACT_DIR: string;
  DRIVER_DIR: string;
  TRINO_HOME: string;
  SQL_DATA_DIR: string;
  SPARK_HISTORY_DIR: string;
  CONNECT_TLS_CERT: string;
  CONNECT_TLS_KEY: string;
  SPARK_CONNECT_JAR: string;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const c = parsed.data;
  // Without an audience, a token the same issuer made for any other application would be accepted.
  if (c.OIDC_ISSUER && !c.OIDC_AUDIENCE) throw new Error(OIDC_AUDIENCE_REQUIRED);
  const keyFile = path.join(c.STACK_DIR, 'secret.key');
  const secretKey = c.SECRET_KEY ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined);
  if (!secretKey || !/^[0-9a-fA-F]{64}$/.test(secretKey)) {
    throw new Error(
      'invalid configuration: SECRET_KEY must be 64 hex characters (run scripts/setup.sh for a development key)',
    );
  }
  const venv = path.join(c.STACK_DIR, 'venv');
  const python = c.PYTHON ?? path.join(venv, 'bin', 'python');
  const sparkHome = c.SPARK_HOME ?? findSparkHome(venv);
  return {
    ...c,
    SECRET_KEY: secretKey,
    PYTHON: python,
    SPARK_HOME: sparkHome,
    ARTIFACT_DIR: c.ARTIFACT_DIR ?? path.join(c.STACK_DIR, 'artifacts'),
    DRIVER_DIR: c.DRIVER_DIR ?? path.join(c.STACK_DIR, 'drivers'),
    TRINO_HOME: c.TRINO_HOME ?? defaultTrinoHome(env),
    SQL_DATA_DIR: c.SQL_DATA_DIR ?? path.join(c.STACK_DIR, 'data', 'sql'),
    SPARK_HISTORY_DIR: c.SPARK_HISTORY_DIR ?? path.join(c.STACK_DIR, 'spark-history'),
    CONNECT_TLS_CERT: c.CONNECT_TLS_CERT ?? path.join(c.STACK_DIR, 'connect-tls', 'cert.pem'),
    CONNECT_TLS_KEY: c.CONNECT_TLS_KEY ?? path.join(c.STACK_DIR, 'connect-tls', 'key.pem'),
    SPARK_CONNECT_JAR:
      c.SPARK_CONNECT_JAR ?? path.join(cacheDir(env), 'spark-connect-3.5.7', 'spark-connect_2.12-3.5.7.jar'),
  };
}

/** The folder scripts/setup.sh installs Trino into, worked out as the script does (empty means unset there too). */
function defaultTrinoHome(env: NodeJS.ProcessEnv): string {
  const xdgCache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache');
  return path.join(env.SPARK_ORCH_CACHE || path.join(xdgCache, 'spark-orchestrator'), 'trino-server-368');
}

/** The cache scripts/setup*.sh install into, outside the clone: $SPARK_ORCH_CACHE, else $XDG_CACHE_HOME or ~/.cache + /spark-orchestrator. */
function cacheDir(env: NodeJS.ProcessEnv): string {
  const xdgCache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache');
  return env.SPARK_ORCH_CACHE || path.join(xdgCache, 'spark-orchestrator');
}

function findSparkHome(venv: string): string {
  const lib = path.join(venv, 'lib');
  if (existsSync(lib)) {
    for (const d of readdirSafe(lib)) {
      const p = path.join(lib, d, 'site-packages', 'pyspark');
      if (existsSync(p)) return p;
    }
  }
  return path.join(lib, 'python3', 'site-packages', 'pyspark');
}

function readdirSafe(p: string): string[] {
  try {
    return readdirSync(p);
  } catch {
    return [];
  }
}
