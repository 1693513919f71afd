// Spark's History Server (org.apache.spark.deploy.history.HistoryServer, in pyspark's jars) over the event
// logs local drivers write: its log folder holds links to them (activities/adapters/local/spark-ui.ts).
// It listens on loopback only (SPARK_LOCAL_IP), on SPARK_HISTORY_URL's port; the API's history proxy
// (api/spark-ui/) is the only way in from outside this host. Used by scripts/stack.ts and by tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Config } from '../lib/config';
import { childEnv } from '../activities/adapters/local/child-env';
import { UI_FILTER_CLASS } from '../activities/adapters/local/ui-filter';
import type { Command } from './services';

export const HISTORY_SERVER_CLASS = 'org.apache.spark.deploy.history.HistoryServer';

export interface HistoryServerOptions {
  config: Pick<Config, 'SPARK_HOME' | 'SPARK_HISTORY_DIR' | 'SPARK_HISTORY_URL'>;
  /** Where its properties file is written. */
  runDir: string;
  /** How often it looks for new and updated logs (default 2 s). */
  updateInterval?: string;
  /** The folder of the Host check's classes (activities/adapters/local/ui-filter.ts), when it could be made. */
  filterClasses?: string;
}

/** The port of SPARK_HISTORY_URL (its scheme's default when the URL names none). */
export const historyPort = (url: string): number => {
  const u = new URL(url);
  return Number(u.port || (u.protocol === 'https:' ? 443 : 80));
};

/**
 * The History Server's command line and its whole environment (start it with only this: `from` is the
 * environment it is picked from); writes its properties file and makes its log folder. It replays event logs
 * the jobs wrote (a job can write anything into its own), so like a driver it gets an allow-list of the host's
 * basics (child-env.ts), never the service's settings and secrets (SECRET_KEY, MONGO_URL, AUTH_ADMIN_KEY, ...).
 */
export function historyServerCommand(
  o: HistoryServerOptions,
  from: NodeJS.ProcessEnv = process.env,
): Command & { env: Record<string, string> } {
  const { SPARK_HOME, SPARK_HISTORY_DIR, SPARK_HISTORY_URL } = o.config;
  mkdirSync(SPARK_HISTORY_DIR, { recursive: true });
  mkdirSync(o.runDir, { recursive: true });
  const props = {
    'spark.history.fs.logDirectory': pathToFileURL(path.resolve(SPARK_HISTORY_DIR)).href,
    'spark.history.ui.port': String(historyPort(SPARK_HISTORY_URL)),
    'spark.history.fs.update.interval': o.updateInterval ?? '2s',
    // Retention (activities/retention.ts) removes logs with their driver folders; the links go with them.
    'spark.history.fs.cleaner.enabled': 'false',
    ...(o.filterClasses && { 'spark.ui.filters': UI_FILTER_CLASS }),
  };
  const file = path.join(o.runDir, 'spark-history.properties');
  writeFileSync(
    file,
    Object.entries(props)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  return {
    cmd: 'java',
    args: [
      '-Xmx256m',
      '-cp',
      [
        path.join(SPARK_HOME, 'conf'),
        path.join(SPARK_HOME, 'jars', '*'),
        ...(o.filterClasses ? [o.filterClasses] : []),
      ].join(':'),
      HISTORY_SERVER_CLASS,
      '--properties-file',
      file,
    ],
    // Its UI binds to SPARK_LOCAL_IP (0.0.0.0 without it).
    env: childEnv('driver', { SPARK_LOCAL_IP: '127.0.0.1', SPARK_HOME }, from),
  };
}
