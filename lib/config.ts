// Configuration, read once from the environment, typed and validated at start-up.
// Every setting and its default is listed here and in the README.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const schema = z.object({
  /** Folder for the dev stack's venv, data, logs, artifacts and local drivers. */
  STACK_DIR: z.string().default(path.join(ROOT, '.stack')),
  /** Uploaded jars, files and pyFiles, one folder per job, group or schedule. Default: $STACK_DIR/artifacts. */
  ARTIFACT_DIR: z.string().optional(),
  /** Working folders (pid, exit code, logs) of drivers on local clusters. Default: $STACK_DIR/drivers. */
  DRIVER_DIR: z.string().optional(),
  /** HTTP port of the API. */
  API_PORT: z.coerce.number().int().min(0).max(65535).default(9888),
  API_HOST: z.string().default('0.0.0.0'),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  /** Task queue of the TypeScript worker (workflows and cluster-adapter activities). */
  TASK_QUEUE: z.string().default('spark-orchestrator'),
  MONGO_URL: z.string().default('mongodb://127.0.0.1:27017/?directConnection=true'),
  MONGO_DB: z.string().default('spark_orchestrator'),
  /** 64 hex characters (AES-256 key) encrypting cluster secrets at rest. Dev default: $STACK_DIR/secret.key. */
  SECRET_KEY: z.string().optional(),
  /** Largest page size a list accepts. */
  MAX_PAGE_SIZE: z.coerce.number().int().min(1).default(1000),
  /** Maximum log lines per logs request (spec §8: service.api.job.logs.maxLines). */
  LOGS_MAX_LINES: z.coerce.number().int().min(1).default(25000),
  /** Maximum scale of a group (402 above it). */
  MAX_GROUP_SCALE: z.coerce.number().int().min(1).default(16),
  /** Idle time after which an autoPause group stops its drivers. */
  GROUP_IDLE_PAUSE_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .default(10 * 60_000),
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
  /** Spark container image and namespace for k8s clusters. */
  K8S_SPARK_IMAGE: z.string().default('apache/spark:3.5.7-python3'),
  K8S_NAMESPACE: z.string().default('default'),
  /** Trino image of the TRINO SQL engines of k8s clusters (368: the version local clusters run). */
  K8S_TRINO_IMAGE: z.string().default('trinodb/trino:368'),
  /** How often the watch activities poll a driver's state. */
  WATCH_INTERVAL_MS: z.coerce.number().int().min(10).default(500),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
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
  /** Sessions each API process keeps open per engine; more concurrent statements queue for one. */
  SQL_SESSIONS_PER_ENGINE: z.coerce.number().int().min(1).max(256).default(16),
});

export type Config = z.infer<typeof schema> & {
  SECRET_KEY: string;
  PYTHON: string;
  SPARK_HOME: string;
  ARTIFACT_DIR: string;
  DRIVER_DIR: string;
  TRINO_HOME: string;
  SQL_DATA_DIR: string;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `invalid configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const c = parsed.data;
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
  };
}

/** The folder scripts/setup.sh installs Trino into, worked out as the script does (empty means unset there too). */
function defaultTrinoHome(env: NodeJS.ProcessEnv): string {
  const xdgCache = env.XDG_CACHE_HOME || path.join(env.HOME || os.homedir(), '.cache');
  return path.join(env.SPARK_ORCH_CACHE || path.join(xdgCache, 'spark-orchestrator'), 'trino-server-368');
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
