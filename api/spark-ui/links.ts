// Where a job's or engine's Spark UI is read through the API (api/spark-ui/routes.ts): `uiUrl` while its
// driver runs, `historyUrl` once it has ended with a Spark application. Paths on the API's own origin.
import { isTerminal, JobType, type JobState } from '../../domain/states';
import { API_PREFIX } from '../routing';

export interface UiLinks {
  uiUrl?: string;
  historyUrl?: string;
}

const LIVE = new Set<string>(['STARTING', 'READY', 'BUSY']);

/** A job's links: only jobs with a driver of their own (single jobs, group instances). */
export function jobLinks(job: { jobId: string; jobType: string; state: JobState; appId?: string }): UiLinks {
  if (job.jobType !== JobType.SINGLE && job.jobType !== JobType.INTERACTIVE) return {};
  const base = `${API_PREFIX}/job/${encodeURIComponent(job.jobId)}`;
  if (LIVE.has(job.state)) return { uiUrl: `${base}/ui/` };
  if (isTerminal(job.state) && job.appId) return { historyUrl: `${base}/history/` };
  return {};
}

/**
 * A SPARK_SQL engine's links while it runs: its live UI, and its run in the History Server (in progress until
 * the engine stops; a stopped engine has no entry to carry links). TRINO engines have no Spark UI.
 */
export function engineLinks(engine: { id: string; type: string; state: string }): UiLinks {
  if (engine.type !== 'SPARK_SQL' || engine.state !== 'RUNNING') return {};
  const base = `${API_PREFIX}/sql/engine/${encodeURIComponent(engine.id)}`;
  return { uiUrl: `${base}/ui/`, historyUrl: `${base}/history/` };
}

/** A Spark Connect server's links while it runs, as a SPARK_SQL engine's. */
export function connectServerLinks(server: { id: string; state: string }): UiLinks {
  if (server.state !== 'RUNNING') return {};
  const base = `${API_PREFIX}/connect/server/${encodeURIComponent(server.id)}`;
  return { uiUrl: `${base}/ui/`, historyUrl: `${base}/history/` };
}

/**
 * Livy's appInfo of a job: absolute URLs on the REST API (the Livy API listens on another port): its Spark
 * UI (live, else its history) and its driver's log lines. `apiUrl`: the REST API's base URL.
 */
export function livyAppInfo(
  apiUrl: string,
  job: { jobId: string; uiUrl?: string; historyUrl?: string } | undefined,
): { driverLogUrl: string | null; sparkUiUrl: string | null } {
  if (!job) return { driverLogUrl: null, sparkUiUrl: null };
  const origin = new URL(apiUrl).origin;
  const ui = job.uiUrl ?? job.historyUrl;
  return {
    driverLogUrl: `${origin}${API_PREFIX}/job/${encodeURIComponent(job.jobId)}/logs`,
    sparkUiUrl: ui ? `${origin}${ui}` : null,
  };
}

/** The REST API's base URL as the Livy API names it: where it listens, else where it is configured to. */
export const apiBaseUrl = (deps: { apiUrl?: string; config: { API_HOST: string; API_PORT: number } }): string =>
  deps.apiUrl ??
  `http://${['0.0.0.0', '::', ''].includes(deps.config.API_HOST) ? '127.0.0.1' : deps.config.API_HOST}:${deps.config.API_PORT}${API_PREFIX}`;
