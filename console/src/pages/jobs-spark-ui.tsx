// The Spark UI panel of a job's page: links to its live UI (while its driver runs) and to its run in the
// History Server (after), and a summary of its stages (how many in each status, the failed ones with their
// reason, how long the application ran) read from Spark's own REST API through the same proxy.
import { API, get, post } from '../api';
import { Fragment } from 'preact';
import { useEffect } from 'preact/hooks';
import type { Job } from '../types';
import { useAsync, useInterval } from '../ui';

/** The parts of Spark's /api/v1/applications/{appId}/stages entries the summary reads. */
export interface SparkStage {
  stageId: number;
  attemptId: number;
  name: string;
  status: string;
  failureReason?: string;
}

interface SparkApp {
  attempts: { duration?: number; startTimeEpoch?: number; completed?: boolean }[];
}

export interface StagesSummary {
  counts: Record<string, number>;
  failed: SparkStage[];
  durationMs?: number;
}

/** Stage statuses in the order they are shown. */
const STATUSES = ['COMPLETE', 'ACTIVE', 'PENDING', 'FAILED', 'SKIPPED'];

export function summarise(stages: SparkStage[], app?: SparkApp, now = Date.now()): StagesSummary {
  const counts: Record<string, number> = {};
  for (const s of stages) counts[s.status] = (counts[s.status] ?? 0) + 1;
  const a = app?.attempts[0];
  const durationMs = a?.completed ? a.duration : a?.startTimeEpoch ? now - a.startTimeEpoch : undefined;
  return { counts, failed: stages.filter((s) => s.status === 'FAILED'), durationMs };
}

/** The API path (after /api/v1) of a UI link: `/api/v1/job/x/ui/` → `/job/x/ui`. */
const apiPath = (url: string) => url.replace(/^\/api\/v1/, '').replace(/\/$/, '');

const seconds = (ms: number) => (ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`);

export function SparkUiPanel({ job }: { job: Job }) {
  const base = job.uiUrl ?? job.historyUrl;
  const appId = job.appId;
  const summary = useAsync(
    async (signal) => {
      if (!base || !appId) return undefined;
      const app = `${apiPath(base)}/api/v1/applications/${encodeURIComponent(appId)}`;
      const [stages, info] = await Promise.all([
        get<SparkStage[]>(`${app}/stages`, undefined, signal),
        get<SparkApp>(app, undefined, signal).catch(() => undefined),
      ]);
      return summarise(stages, info);
    },
    [base, appId],
  );
  // A running job's stages move on: read them again every few seconds.
  useInterval(() => {
    if (job.uiUrl) summary.reload();
  }, 3000);
  // Links a browser follows carry no credentials: a short-lived cookie of the UI pages stands in for them
  // (api/spark-ui/session.ts), renewed while the page is open. Without authentication it sets nothing.
  useEffect(() => void post('/spark-ui/session').catch(() => undefined), [base]);
  useInterval(() => void post('/spark-ui/session').catch(() => undefined), 5 * 60_000);

  return (
    <div class="panel" aria-label="Spark UI">
      <h2 class="panel-title">Spark UI</h2>
      <p>
        {job.uiUrl && (
          <a href={job.uiUrl} target="_blank" rel="noopener noreferrer">
            Live Spark UI
          </a>
        )}{' '}
        {job.historyUrl && (
          <a href={job.historyUrl} target="_blank" rel="noopener noreferrer">
            Spark History Server
          </a>
        )}
        {!base && <span class="muted">none while the driver has not started</span>}
      </p>
      {base && !appId && <p class="muted">the Spark application is not known yet</p>}
      {summary.error && !summary.data && <p class="muted">stages not readable now: {summary.error}</p>}
      {summary.data && <StagesView s={summary.data} />}
      <p class="muted">
        <small>UI pages under {API}: read-only, behind the same sign-in.</small>
      </p>
    </div>
  );
}

function StagesView({ s }: { s: StagesSummary }) {
  const shown = STATUSES.filter((st) => s.counts[st]);
  return (
    <div aria-label="stages summary">
      <dl class="kv">
        <dt>Stages</dt>
        <dd class="num-left">
          {shown.length
            ? shown.map((st, i) => (
                <Fragment key={st}>
                  {i > 0 && ', '}
                  {s.counts[st]} {st.toLowerCase()}
                </Fragment>
              ))
            : 'none yet'}
        </dd>
        <dt>Failed stages</dt>
        <dd class="num-left">{s.failed.length}</dd>
        <dt>Duration</dt>
        <dd class="num-left">{s.durationMs === undefined ? '—' : seconds(s.durationMs)}</dd>
      </dl>
      {s.failed.length > 0 && (
        <ul class="failed-stages">
          {s.failed.map((f) => (
            <li key={`${f.stageId}.${f.attemptId}`}>
              stage {f.stageId}: {f.name}
              {f.failureReason && <span class="muted"> — {f.failureReason.split('\n')[0]}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
