// Which Spark UI a proxied path reaches: the live UI of the driver of a job (single job or group instance)
// or SQL engine while it runs, at the port its launch recorded in its folder; the History Server's pages of
// the job's application once it has one. Nothing else: an unknown job, a driver without a recorded UI, a
// path of another application answer 404.
import path from 'node:path';
import type { Document } from 'mongodb';
import type { Context } from 'koa';
import { findAppId } from '../../activities/adapters/local/driver-files';
import { instanceDriverId } from '../../domain/group';
import { singleJobDriverId } from '../../domain/job';
import { isTerminal, JobType, type JobState } from '../../domain/states';
import { ConnectServerState } from '../../domain/connect';
import { SqlEngineState } from '../../domain/sql-engine';
import { Collections } from '../../lib/mongo';
import type { ApiDeps } from '../deps';
import { notFound } from '../errors';
import { API_PREFIX } from '../routing';
import { APP_ID, cleanPath, cleanQuery, historyPathAllowed, liveUiPathAllowed, PROXY_ID } from './paths';
import { proxy } from './proxy';
import { liveUiAddress, type UiDriver } from './targets';

/** A driver id as a folder name (the local adapter's rule): nothing that climbs out of DRIVER_DIR. */
const DRIVER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/** What the proxy needs of a job or engine. */
export interface UiSubject {
  /** Its id (decoded), as the route matched it. */
  id: string;
  /** The API path of the subject (`/api/v1/job/<jobId>`), under which `/ui` and `/history` are served. */
  base: string;
  /** Its driver (the current try's), if it has one. */
  driverId?: string;
  /** Its driver runs now. */
  live: boolean;
  /** Its Spark application id, once known. */
  appId?: string;
  /** The cluster its driver runs on, as its record names it. */
  cluster?: UiDriver['cluster'];
  what: string;
}

export const jobBase = (jobId: string) => `${API_PREFIX}/job/${jobId}`;
export const engineBase = (engineId: string) => `${API_PREFIX}/sql/engine/${engineId}`;
export const connectServerBase = (serverId: string) => `${API_PREFIX}/connect/server/${serverId}`;

/** The driver of a job's current try: single jobs one per attempt, group instances one each. */
export function jobDriverId(job: { jobId: string; jobType: string; attempt?: number }): string | undefined {
  if (job.jobType === JobType.SINGLE) return singleJobDriverId(job.jobId, job.attempt ?? 1);
  if (job.jobType === JobType.INTERACTIVE) return instanceDriverId(job.jobId);
  return undefined;
}

export async function jobSubject({ store }: Pick<ApiDeps, 'store'>, jobId: string): Promise<UiSubject> {
  const missing = `job '${jobId}' does not exist`;
  if (!PROXY_ID.test(jobId)) throw notFound(missing);
  const d = await store.col(Collections.jobs).findOne({ _id: jobId } as Document);
  if (!d) throw notFound(missing);
  const state = d.state as JobState;
  return {
    id: jobId,
    base: jobBase(jobId),
    // A record without a number of tries is on its first (Number(undefined) would name driver job-…-NaN).
    driverId: jobDriverId({
      jobId,
      jobType: String(d.jobType),
      attempt: typeof d.attempt === 'number' ? d.attempt : undefined,
    }),
    live: !isTerminal(state) && state !== 'SUBMITTED' && state !== 'UNKNOWN',
    ...(typeof d.appId === 'string' && { appId: d.appId }),
    ...(typeof d.clusterName === 'string' && { cluster: { name: d.clusterName } }),
    what: `job ${jobId}`,
  };
}

export async function engineSubject(
  { store, config }: Pick<ApiDeps, 'store' | 'config'>,
  engineId: string,
): Promise<UiSubject> {
  const missing = `SQL engine '${engineId}' does not exist`;
  if (!PROXY_ID.test(engineId)) throw notFound(missing);
  const d = await store.col(Collections.sqlEngines).findOne({ id: engineId } as Document);
  if (!d) throw notFound(missing);
  const driverId = typeof d.driverId === 'string' && DRIVER_ID.test(d.driverId) ? d.driverId : undefined;
  // Engines' records carry no application id: their driver folder has it (local clusters).
  const appId = driverId ? await findAppId(path.join(config.DRIVER_DIR, driverId)).catch(() => undefined) : undefined;
  return {
    id: engineId,
    base: engineBase(engineId),
    driverId,
    live: d.state === SqlEngineState.RUNNING,
    ...(appId && { appId }),
    ...(typeof d.clusterId === 'string' && { cluster: { id: d.clusterId } }),
    what: `SQL engine ${engineId}`,
  };
}

export async function connectServerSubject(
  { store, config }: Pick<ApiDeps, 'store' | 'config'>,
  serverId: string,
): Promise<UiSubject> {
  const missing = `Spark Connect server '${serverId}' does not exist`;
  if (!PROXY_ID.test(serverId)) throw notFound(missing);
  const d = await store.col(Collections.connectServers).findOne({ id: serverId } as Document);
  if (!d) throw notFound(missing);
  const driverId = typeof d.driverId === 'string' && DRIVER_ID.test(d.driverId) ? d.driverId : undefined;
  const appId = driverId ? await findAppId(path.join(config.DRIVER_DIR, driverId)).catch(() => undefined) : undefined;
  return {
    id: serverId,
    base: connectServerBase(serverId),
    driverId,
    live: d.state === ConnectServerState.RUNNING,
    ...(appId && { appId }),
    ...(typeof d.clusterId === 'string' && { cluster: { id: d.clusterId } }),
    what: `Spark Connect server ${serverId}`,
  };
}

/**
 * The request's path split at `<base>/<kind>`, the base as the request spelt it (a scheduled job's `:` may
 * come as `%3A`: Spark's links must keep the caller's spelling): undefined unless its id decodes to the
 * subject's. Only id characters and %-escapes reach the context, which Spark writes into its pages.
 */
function split(ctx: Context, s: UiSubject, kind: 'ui' | 'history'): { base: string; rest: string } | undefined {
  const m = new RegExp(
    `^(${API_PREFIX}/(?:job|sql/engine|connect/server)/([A-Za-z0-9._:-]|%[0-9A-Fa-f]{2})+)/${kind}(/.*)?$`,
  ).exec(ctx.path);
  if (!m) return undefined;
  const raw = m[1].slice(m[1].lastIndexOf('/') + 1);
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return id === s.id && m[1] === `${s.base.slice(0, s.base.lastIndexOf('/'))}/${raw}`
    ? { base: m[1], rest: m[3] ?? '' }
    : undefined;
}

/** The target path and query, and the context Spark writes its links under; 404 for anything else. */
function checked(ctx: Context, s: UiSubject, kind: 'ui' | 'history'): { target: string; base: string } {
  const parts = split(ctx, s, kind);
  const p = parts === undefined ? undefined : cleanPath(parts.rest);
  const q = cleanQuery(ctx.querystring);
  if (!parts || p === undefined || q === undefined) throw notFound(`no such page of the Spark UI of ${s.what}`);
  return { target: q ? `${p}?${q}` : p, base: parts.base };
}

/** GET <base>/ui/…: the live driver's UI. */
export async function serveLiveUi(deps: Pick<ApiDeps, 'config' | 'store'>, ctx: Context, s: UiSubject): Promise<void> {
  const { target, base } = checked(ctx, s, 'ui');
  if (!liveUiPathAllowed(target.split('?')[0])) throw notFound(`the Spark UI of ${s.what} is read-only here`);
  const ui =
    s.live && s.driverId
      ? await liveUiAddress(deps, { driverId: s.driverId, cluster: s.cluster ?? { name: '' } })
      : undefined;
  if (!ui) {
    throw notFound(
      s.live
        ? `${s.what} has no Spark UI this API can reach (its driver is not up yet, recorded none on this host, or runs where UIs are not proxied)`
        : `${s.what} does not run now${s.appId ? `: its finished run is at ${s.base}/history` : ''}`,
    );
  }
  await proxy(ctx, {
    host: ui.host,
    port: ui.port,
    path: target,
    context: `${base}/ui`,
    what: `the Spark UI of ${s.what}`,
    refused: `the Spark UI of ${s.what} does not answer: its driver is starting, or has just ended`,
  });
}

/** GET <base>/history/…: the History Server's pages of the subject's application. */
export async function serveHistory(deps: Pick<ApiDeps, 'config'>, ctx: Context, s: UiSubject): Promise<void> {
  if (!s.appId || !APP_ID.test(s.appId)) throw notFound(`${s.what} has no Spark application (yet)`);
  const { target, base } = checked(ctx, s, 'history');
  const p = target.split('?')[0];
  if (p === '/') {
    ctx.redirect(`${base}/history/history/${s.appId}/jobs/`);
    return;
  }
  if (!historyPathAllowed(p, s.appId)) throw notFound(`only the pages of ${s.what}'s application are served here`);
  const url = new URL(deps.config.SPARK_HISTORY_URL);
  await proxy(ctx, {
    host: url.hostname,
    port: Number(url.port || 80),
    path: target,
    context: `${base}/history`,
    what: 'the Spark History Server',
  });
}

/** GET <base>/{ui,history}/static/…: Spark's own static files, from the History Server (same Spark). */
export async function serveStatic(deps: Pick<ApiDeps, 'config'>, ctx: Context): Promise<void> {
  const m = /^(.*\/(?:ui|history))(\/static\/.*)$/.exec(ctx.path);
  const p = m ? cleanPath(m[2]) : undefined;
  if (!m || p === undefined) throw notFound('no such static file of the Spark UI');
  const url = new URL(deps.config.SPARK_HISTORY_URL);
  await proxy(ctx, {
    host: url.hostname,
    port: Number(url.port || 80),
    path: p,
    context: m[1],
    what: 'the Spark History Server',
    shared: true,
  });
}
