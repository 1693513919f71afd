// The ResourceManager's and NodeManager's REST APIs, as far as the adapter needs them: applications by id and by
// tag, killing one, the containers of an application on a node and their log files. Every call has a time
// limit; a ResourceManager that does not answer is a YarnUnreachable error (the driver's status is UNKNOWN).

/** The fields of an application report the adapter reads (RM REST /ws/v1/cluster/apps/{id}). */
export interface YarnApp {
  id: string;
  /** NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED */
  state: string;
  /** UNDEFINED, SUCCEEDED, FAILED, KILLED */
  finalStatus: string;
  diagnostics?: string;
  queue?: string;
  startedTime?: number;
  finishedTime?: number;
  /** http://<nm web>/node/containerlogs/<containerId>/<user>: where the driver (the AM's container) logs. */
  amContainerLogs?: string;
  /** host:port of the NodeManager's web app running the AM. */
  amHostHttpAddress?: string;
  applicationTags?: string;
  /** NOT_START, RUNNING, SUCCEEDED, FAILED, TIME_OUT, DISABLED (no aggregation), ...: the ended containers' logs. */
  logAggregationStatus?: string;
}

export class YarnUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'YarnUnreachable';
  }
}

export interface YarnRest {
  app(appId: string): Promise<YarnApp | undefined>;
  /** Applications carrying the tag (YARN keeps tags lower case). */
  appsByTag(tag: string): Promise<YarnApp[]>;
  kill(appId: string): Promise<void>;
  /** The most a queue can have (its maximum effective capacity): MiB and vcores; undefined: no such queue. */
  queueMax(queue: string): Promise<{ memoryMb: number; vCores: number } | undefined>;
  /** Container ids of the application on the NodeManager at `nmWeb` (host:port). */
  containers(nmWeb: string, appId: string): Promise<string[]>;
  /** A container's log file from its NodeManager; undefined when the node has none (yet, or any more). */
  containerLog(nmWeb: string, containerId: string, file: string): Promise<string | undefined>;
}

export function yarnRest(rmUrl: string, timeoutMs: number): YarnRest {
  const base = rmUrl.replace(/\/+$/, '');
  async function call(url: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(url, {
        ...init,
        headers: { accept: 'application/json', ...(init.headers ?? {}) },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new YarnUnreachable(
        `${new URL(url).host} did not answer: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
      );
    }
  }
  const rm = async (p: string, init?: RequestInit) => {
    const r = await call(`${base}${p}`, init);
    if (r.status >= 500) throw new YarnUnreachable(`ResourceManager ${base} answered ${r.status}`);
    return r;
  };
  return {
    async app(appId) {
      const r = await rm(`/ws/v1/cluster/apps/${encodeURIComponent(appId)}`);
      if (r.status === 404) return undefined;
      if (!r.ok) throw new Error(`ResourceManager ${base}: ${r.status} for application ${appId}`);
      return ((await r.json()) as { app: YarnApp }).app;
    },
    async appsByTag(tag) {
      const r = await rm(`/ws/v1/cluster/apps?applicationTags=${encodeURIComponent(tag)}`);
      if (!r.ok) throw new Error(`ResourceManager ${base}: ${r.status} listing applications`);
      const body = (await r.json()) as { apps: { app?: YarnApp[] } | null };
      return body.apps?.app ?? [];
    },
    async kill(appId) {
      const r = await rm(`/ws/v1/cluster/apps/${encodeURIComponent(appId)}/state`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ state: 'KILLED' }),
      });
      if (!r.ok && r.status !== 404) throw new Error(`ResourceManager ${base}: ${r.status} killing ${appId}`);
    },
    async queueMax(queue) {
      const r = await rm('/ws/v1/cluster/scheduler');
      if (!r.ok) throw new Error(`ResourceManager ${base}: ${r.status} reading the scheduler`);
      interface Q {
        queueName?: string;
        queuePath?: string;
        maxEffectiveCapacity?: { memory: number; vCores: number };
        queues?: { queue?: Q[] };
      }
      const body = (await r.json()) as { scheduler?: { schedulerInfo?: Q } };
      const find = (q: Q | undefined): Q | undefined => {
        if (!q) return undefined;
        if (q.queuePath === queue || q.queuePath === `root.${queue}` || q.queueName === queue) return q;
        for (const c of q.queues?.queue ?? []) {
          const hit = find(c);
          if (hit) return hit;
        }
        return undefined;
      };
      const q = find(body.scheduler?.schedulerInfo);
      const max = q?.maxEffectiveCapacity;
      return max ? { memoryMb: max.memory, vCores: max.vCores } : undefined;
    },
    async containers(nmWeb, appId) {
      const r = await call(`http://${nmWeb}/ws/v1/node/apps/${encodeURIComponent(appId)}`);
      if (!r.ok) return [];
      const body = (await r.json()) as { app?: { containerids?: string[] } };
      return body.app?.containerids ?? [];
    },
    async containerLog(nmWeb, containerId, file) {
      const r = await call(
        `http://${nmWeb}/ws/v1/node/containerlogs/${encodeURIComponent(containerId)}/${encodeURIComponent(file)}`,
        { headers: { accept: 'text/plain' } },
      );
      if (!r.ok) return undefined;
      return r.text();
    },
  };
}
