// The direct path of a synchronous execution (4.5): the API calls a READY driver of the group over
// keep-alive HTTP (runner/spark_runner/direct.py) instead of starting a workflow. The group workflow keeps
// the lifecycle and says which instances listen where (its `directEndpoints` query, cached briefly); this
// module picks the least busy one, retries on another when a driver cannot be reached or dies mid-call,
// and answers undefined when no instance could take it, so the caller falls back to the workflow path.
import http from 'node:http';
import type { DirectEndpoint, RunnerRequest, RunnerResponse } from '../../domain/group';
import { groupWorkflowId } from '../../domain/ids';
import { DIRECT_SECRET_HEADER, directSecret } from '../../lib/driver-secret';
import { logger } from '../../lib/log';
import { directEndpointsQuery } from '../../workflows/group';
import type { ApiDeps } from '../deps';

const log = logger('api.direct');

/** How long the instances of a group are taken from the cache before the workflow is asked again. */
const ENDPOINTS_TTL_MS = 1_000;
/** An instance that could not be reached is skipped this long (unless nothing else is left). */
const UNREACHABLE_MS = 5_000;
/** Longest direct call, like the workflow path's start-to-close timeout. */
const CALL_TIMEOUT_MS = 3_600_000;
/**
 * A driver whose address cannot be connected to within this time is unreachable (e.g. a pod IP this API
 * cannot route to): the next instance is tried, then the workflow path.
 */
const CONNECT_TIMEOUT_MS = 2_000;
const MAX_ATTEMPTS = 3;

interface Cached {
  at: number;
  list: DirectEndpoint[];
  refreshing?: Promise<DirectEndpoint[]>;
}

/** A driver that could not take the call (refused, reset, died mid-call, refused the secret). */
class Unreachable extends Error {}

export class DirectChannel {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });
  private readonly groups = new Map<string, Cached>();
  private readonly inFlight = new Map<string, number>();
  private readonly unreachableUntil = new Map<string, number>();
  private readonly secrets = new Map<string, string>();

  constructor(private readonly deps: ApiDeps) {}

  /** Runs the request on a READY instance of the group; undefined when none could take it. */
  async execute(groupId: string, req: RunnerRequest): Promise<RunnerResponse | undefined> {
    const tried = new Set<string>();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      // A retry takes another instance of the list it has; only when none is left does it wait for the workflow's
      // answer, which can take seconds while the group is busy replacing the driver that just failed.
      const target =
        this.pick(await this.endpoints(groupId, false), tried) ??
        (attempt > 0 ? this.pick(await this.endpoints(groupId, true), tried) : undefined);
      if (!target) return undefined;
      tried.add(target.endpoint);
      try {
        return await this.call(target, req);
      } catch (e) {
        if (!(e instanceof Unreachable)) throw e;
        log.warn('direct execute failed; trying another instance', {
          groupId,
          instanceId: target.instanceId,
          error: e.message,
        });
        this.unreachableUntil.set(target.endpoint, Date.now() + UNREACHABLE_MS);
      }
    }
    return undefined;
  }

  private secretOf(driverId: string): string {
    let s = this.secrets.get(driverId);
    if (!s) {
      if (this.secrets.size > 10_000) this.secrets.clear();
      s = directSecret(this.deps.config.SECRET_KEY, driverId);
      this.secrets.set(driverId, s);
    }
    return s;
  }

  close(): void {
    this.agent.destroy();
  }

  /** The group's direct instances: from the cache, refreshed in the background once stale. */
  private async endpoints(groupId: string, fresh: boolean): Promise<DirectEndpoint[]> {
    const cached = this.groups.get(groupId);
    const now = Date.now();
    if (cached && !fresh && now - cached.at < ENDPOINTS_TTL_MS) return cached.list;
    if (cached?.refreshing) return fresh ? cached.refreshing : cached.list;
    const refreshing = this.ask(groupId).then((list) => {
      this.groups.set(groupId, { at: Date.now(), list });
      return list;
    });
    this.groups.set(groupId, { at: cached?.at ?? 0, list: cached?.list ?? [], refreshing });
    // A stale list answers at once; the first one (or a retry) waits for the workflow's answer.
    return cached && cached.list.length > 0 && !fresh ? cached.list : refreshing;
  }

  private async ask(groupId: string): Promise<DirectEndpoint[]> {
    try {
      return await this.deps.temporal.workflow.getHandle(groupWorkflowId(groupId)).query(directEndpointsQuery);
    } catch (e) {
      // A group without a running workflow (archived, or not yet started) has no direct instances.
      log.debug('directEndpoints query failed', { groupId, error: (e as Error).message });
      return [];
    }
  }

  /** The least busy instance not tried yet, preferring ones not recently unreachable. */
  private pick(list: DirectEndpoint[], tried: Set<string>): DirectEndpoint | undefined {
    const now = Date.now();
    const open = list.filter((e) => !tried.has(e.endpoint));
    const reachable = open.filter((e) => (this.unreachableUntil.get(e.endpoint) ?? 0) <= now);
    const pool = reachable.length > 0 ? reachable : open;
    let best: DirectEndpoint | undefined;
    for (const e of pool) if (!best || this.load(e) < this.load(best)) best = e;
    return best;
  }

  private load(e: DirectEndpoint): number {
    return this.inFlight.get(e.endpoint) ?? 0;
  }

  private async call(target: DirectEndpoint, req: RunnerRequest): Promise<RunnerResponse> {
    const key = target.endpoint;
    this.inFlight.set(key, this.load(target) + 1);
    try {
      return await this.post(target, req);
    } finally {
      const n = this.load(target) - 1;
      if (n > 0) this.inFlight.set(key, n);
      else this.inFlight.delete(key);
    }
  }

  private post(target: DirectEndpoint, req: RunnerRequest): Promise<RunnerResponse> {
    const [host, port] = splitEndpoint(target.endpoint);
    const body = Buffer.from(JSON.stringify(req));
    const secret = this.secretOf(target.driverId);
    return new Promise((resolve, reject) => {
      const r = http.request(
        {
          host,
          port,
          method: 'POST',
          path: '/execute',
          agent: this.agent,
          timeout: CALL_TIMEOUT_MS,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            [DIRECT_SECRET_HEADER]: secret,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => reject(new Unreachable(e.message)));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            if (res.statusCode !== 200) {
              reject(new Unreachable(`the driver answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
              return;
            }
            try {
              resolve(JSON.parse(text) as RunnerResponse);
            } catch {
              reject(new Unreachable('the driver answered something that is not JSON'));
            }
          });
        },
      );
      r.on('socket', (socket) => {
        if (!socket.connecting) return;
        const t = setTimeout(
          () => r.destroy(new Error(`cannot connect to ${target.endpoint} within ${CONNECT_TIMEOUT_MS} ms`)),
          CONNECT_TIMEOUT_MS,
        );
        socket.once('connect', () => clearTimeout(t));
        socket.once('close', () => clearTimeout(t));
      });
      r.on('timeout', () => r.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
      r.on('error', (e) => reject(new Unreachable(e.message)));
      r.end(body);
    });
  }
}

function splitEndpoint(endpoint: string): [string, number] {
  const i = endpoint.lastIndexOf(':');
  return [endpoint.slice(0, i).replace(/^\[|\]$/g, ''), Number(endpoint.slice(i + 1))];
}

const channels = new WeakMap<ApiDeps, DirectChannel>();

/** The API process's channel (one per deps: tests start several APIs in one process). */
export function directChannel(deps: ApiDeps): DirectChannel {
  let c = channels.get(deps);
  if (!c) {
    c = new DirectChannel(deps);
    channels.set(deps, c);
  }
  return c;
}
