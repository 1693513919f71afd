// The gateway's sessions: which principal owns each Spark Connect session, the server (generation) it runs on,
// and when it ends. A session starts with its first call (pyspark makes its id), is written to the
// connectSessions collection and the audit trail, and ends, audited, when it idles past CONNECT_SESSION_IDLE_MS,
// when its client has been disconnected for a grace period (pyspark 3.5 sends no release of a session: closing
// its channel is the only sign), or when its server died. An ended session's id keeps answering
// FAILED_PRECONDITION with why, so its client fails clearly instead of getting a new, empty session on a
// restarted server.
// Over 300 lines on purpose: one SessionTable whose maps (live sessions, ended ones, idle timers) every step
// reads and changes; split, its private state would have to be exported. The gRPC wording is in grpc.ts.
import { randomUUID } from 'node:crypto';
import type { Document } from 'mongodb';
import {
  ConnectServerState,
  ConnectSessionState,
  connectServerId,
  type ConnectServerRecord,
  type ConnectSessionRecord,
} from '../../domain/connect';
import { tcpAccepts } from '../../lib/tcp';
import type { EngineEndpoint } from '../../domain/sql-engine';
import { connectServerSecret } from '../../lib/driver-secret';
import { logger } from '../../lib/log';
import { Collections } from '../../lib/mongo';
import type { AuditDoc } from '../audit/trail';
import type { Principal } from '../auth/authenticate';
import type { StoredCluster } from '../../activities/adapters/cluster-types';
import { ApiError } from '../errors';
import type { ApiDeps } from '../deps';
import { GrpcError, GrpcStatus } from './grpc';
import { ensureServer, failedMessage, serverUsed, serversOf, sessionsOf } from './service';

const log = logger('connect');

/** How long a session whose client disconnected may come back before it is ended. */
export const DISCONNECT_GRACE_MS = 30_000;
/** How often the session's lastUsed is written to its record while it calls (the idle sweep reads memory). */
const TOUCH_WRITE_MS = 30_000;

/** A client's connection to the gateway: a session whose connections have all closed is disconnected. */
export interface ClientConnection {
  once(event: 'close', listener: () => void): unknown;
}

export interface LiveSession {
  record: ConnectSessionRecord;
  endpoint: EngineEndpoint;
  /** The server's secret, which the gateway adds to each forwarded call. */
  secret: string;
  connections: Set<ClientConnection>;
  disconnectedAt?: number;
  lastWritten: number;
  /** Calls forwarded and not yet answered: a session running a long query is not idle. */
  inFlight: number;
}

export interface SessionTableOptions {
  /** Disconnect grace (tests shorten it). */
  graceMs?: number;
  now?: () => number;
}

const ACTIVE = ConnectSessionState.ACTIVE;
const ENDED = ConnectSessionState.ENDED;

export class SessionTable {
  private readonly live = new Map<string, LiveSession>();
  /** Ended sessions' reasons, so a late call fails clearly; bounded, oldest dropped. */
  private readonly ended = new Map<string, { principal: string; reason: string }>();
  private readonly starting = new Map<string, Promise<LiveSession>>();
  /** Last `used` signal per server workflow, by cluster id. */
  private readonly signalled = new Map<string, number>();
  private readonly graceMs: number;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: ApiDeps,
    opts: SessionTableOptions = {},
  ) {
    this.graceMs = opts.graceMs ?? DISCONNECT_GRACE_MS;
    this.now = opts.now ?? Date.now;
    const every = Math.max(250, Math.min(5_000, deps.config.CONNECT_SESSION_IDLE_MS / 4, this.graceMs / 2));
    this.sweeper = setInterval(
      () => void this.sweep().catch((e) => log.warn('session sweep failed', { err: String(e) })),
      every,
    );
    this.sweeper.unref();
  }

  /** The live session a call belongs to, started on its first call; throws GrpcError. */
  async route(sessionId: string, who: Principal, clusterName: string, conn: ClientConnection): Promise<LiveSession> {
    let s = this.live.get(sessionId);
    if (!s) {
      const ended = this.ended.get(sessionId);
      if (ended) throw this.endedError(sessionId, ended, who);
      let p = this.starting.get(sessionId);
      if (!p) {
        p = this.start(sessionId, who, clusterName).finally(() => this.starting.delete(sessionId));
        this.starting.set(sessionId, p);
      }
      s = await p;
    }
    if (s.record.principal !== who.id)
      throw new GrpcError(GrpcStatus.PERMISSION_DENIED, `session ${sessionId} belongs to another principal`);
    if (s.record.clusterName !== clusterName)
      throw new GrpcError(
        GrpcStatus.FAILED_PRECONDITION,
        `session ${sessionId} runs on cluster '${s.record.clusterName}', not '${clusterName}'`,
      );
    const t = this.now();
    s.record.lastUsed = t;
    s.record.calls++;
    if (!s.connections.has(conn)) {
      s.connections.add(conn);
      conn.once('close', () => {
        s.connections.delete(conn);
        if (!s.connections.size) s.disconnectedAt = this.now();
      });
    }
    s.disconnectedAt = undefined;
    this.writeLastUsed(s, t);
    this.keepServer(s.record.clusterId);
    return s;
  }

  /** Now and then, so other API processes' sweeps see the session alive (their own memory has no record of it). */
  private writeLastUsed(s: LiveSession, t: number): void {
    if (t - s.lastWritten <= TOUCH_WRITE_MS) return;
    s.lastWritten = t;
    void sessionsOf(this.deps)
      .updateOne({ _id: s.record.id } as Document, { $set: { lastUsed: t, calls: s.record.calls } })
      .catch(() => undefined);
  }

  /** Around each forwarded call: its idle time counts from its last call's answer. */
  callStarted(s: LiveSession): void {
    s.inFlight++;
  }

  callEnded(s: LiveSession): void {
    s.inFlight = Math.max(0, s.inFlight - 1);
    s.record.lastUsed = this.now();
  }

  /** Ends a session (its server died, it idled, its client left); idempotent. */
  async end(sessionId: string, reason: string): Promise<void> {
    const s = this.live.get(sessionId);
    if (!s) return;
    this.live.delete(sessionId);
    this.remember(sessionId, s.record.principal, reason);
    const endTime = this.now();
    await sessionsOf(this.deps)
      .updateOne({ _id: sessionId } as Document, {
        $set: { state: ENDED, endTime, endReason: reason, lastUsed: s.record.lastUsed, calls: s.record.calls },
      })
      .catch((e: unknown) => log.warn('session record not written', { sessionId, err: String(e) }));
    await this.audit(s.record, 'end', reason);
    log.info('connect session ended', { sessionId, principal: s.record.principal, reason });
  }

  /** Ends every session of a server generation (the gateway found it gone). */
  async endOnDriver(driverId: string, reason: string): Promise<void> {
    const ids = [...this.live.values()].filter((s) => s.record.driverId === driverId).map((s) => s.record.id);
    await Promise.all(ids.map((id) => this.end(id, reason)));
  }

  get size(): number {
    return this.live.size;
  }

  async close(reason = 'the gateway stopped'): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    // Records stay ACTIVE: a restarted gateway adopts them when their clients call again.
    void reason;
    this.live.clear();
  }

  private endedError(sessionId: string, e: { principal: string; reason: string }, who: Principal): GrpcError {
    if (e.principal !== who.id)
      return new GrpcError(GrpcStatus.PERMISSION_DENIED, `session ${sessionId} belongs to another principal`);
    return new GrpcError(
      GrpcStatus.FAILED_PRECONDITION,
      `Spark Connect session ${sessionId} has ended: ${e.reason}; start a new session (SparkSession.builder...getOrCreate())`,
    );
  }

  private remember(sessionId: string, principal: string, reason: string): void {
    this.ended.set(sessionId, { principal, reason });
    if (this.ended.size > 10_000) this.ended.delete(this.ended.keys().next().value as string);
  }

  private async start(sessionId: string, who: Principal, clusterName: string): Promise<LiveSession> {
    const { deps } = this;
    const stored = await sessionsOf(deps).findOne({ _id: sessionId } as Document);
    if (stored && stored.principal !== who.id)
      throw new GrpcError(GrpcStatus.PERMISSION_DENIED, `session ${sessionId} belongs to another principal`);
    if (stored?.state === ENDED) {
      const reason = stored.endReason ?? 'it ended';
      this.remember(sessionId, stored.principal, reason);
      throw this.endedError(sessionId, { principal: stored.principal, reason }, who);
    }
    const cluster = await deps.store
      .col<StoredCluster>(Collections.clusters)
      .findOne({ name: clusterName }, { projection: { _id: 1, id: 1, name: 1 } });
    if (!cluster)
      throw new GrpcError(
        GrpcStatus.NOT_FOUND,
        `cluster '${clusterName}' does not exist (name it with ;cluster=<name> in the sc:// URL; default: default)`,
      );
    if (stored) return this.adopt(stored as ConnectSessionRecord, who);
    const active = await sessionsOf(deps).countDocuments({ principal: who.id, state: ACTIVE });
    const limit = deps.config.CONNECT_SESSIONS_PER_PRINCIPAL;
    if (active >= limit)
      throw new GrpcError(
        GrpcStatus.RESOURCE_EXHAUSTED,
        `${who.id} already holds ${active} Spark Connect sessions, the most one principal may (CONNECT_SESSIONS_PER_PRINCIPAL=${limit}); stop one first`,
      );
    const full = await deps.store.col<StoredCluster>(Collections.clusters).findOne({ _id: cluster._id });
    const server = await this.liveServer(full as StoredCluster);
    if (server.state !== ConnectServerState.RUNNING || !server.endpoint || !server.driverId)
      throw new GrpcError(GrpcStatus.FAILED_PRECONDITION, failedMessage(server));
    const t = this.now();
    const record: ConnectSessionRecord = {
      id: sessionId,
      clusterId: server.clusterId,
      clusterName: server.clusterName,
      serverId: server.id,
      driverId: server.driverId,
      principal: who.id,
      state: ACTIVE,
      startTime: t,
      lastUsed: t,
      calls: 0,
    };
    await sessionsOf(deps).insertOne({ _id: sessionId, ...record } as never);
    await this.audit(record, 'start', undefined, who);
    log.info('connect session started', { sessionId, principal: who.id, cluster: record.clusterName });
    return this.track(record, server.endpoint);
  }

  /**
   * The cluster's server, running and listening. Right after a server died its workflow may not have seen it yet
   * and still answers with the dead generation: asked again until another generation listens.
   */
  private async liveServer(cluster: StoredCluster): Promise<ConnectServerRecord> {
    const deadline = this.now() + this.deps.config.CONNECT_START_TIMEOUT_MS;
    for (;;) {
      let server: ConnectServerRecord;
      try {
        server = await ensureServer(this.deps, cluster as never, { force: false, wait: true });
      } catch (e) {
        throw toGrpc(e);
      }
      if (server.state !== ConnectServerState.RUNNING || !server.endpoint || !server.driverId)
        throw new GrpcError(GrpcStatus.FAILED_PRECONDITION, failedMessage(server));
      if (await tcpAccepts(server.endpoint, 2_000)) return server;
      if (this.now() > deadline)
        throw new GrpcError(
          GrpcStatus.UNAVAILABLE,
          `the Spark Connect server of cluster '${cluster.name}' does not answer; try again shortly`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** A session recorded ACTIVE by an earlier gateway (restarted, or another API process): go on if its server does. */
  private async adopt(stored: ConnectSessionRecord, who: Principal): Promise<LiveSession> {
    const server = await serversOf(this.deps).findOne({ _id: connectServerId(stored.clusterId) } as Document);
    if (server?.state === ConnectServerState.RUNNING && server.endpoint && server.driverId === stored.driverId)
      return this.track({ ...stored }, server.endpoint);
    const reason = 'the Spark Connect server it ran on has stopped or was restarted';
    await sessionsOf(this.deps)
      .updateOne({ _id: stored.id } as Document, { $set: { state: ENDED, endTime: this.now(), endReason: reason } })
      .catch(() => undefined);
    await this.audit(stored, 'end', reason, who);
    this.remember(stored.id, stored.principal, reason);
    throw this.endedError(stored.id, { principal: stored.principal, reason }, who);
  }

  private track(record: ConnectSessionRecord, endpoint: EngineEndpoint): LiveSession {
    const s: LiveSession = {
      record,
      endpoint,
      secret: connectServerSecret(this.deps.config.SECRET_KEY, record.driverId),
      connections: new Set(),
      lastWritten: this.now(),
      inFlight: 0,
    };
    this.live.set(record.id, s);
    this.keepServer(record.clusterId, true);
    return s;
  }

  /** Keeps the session's server from idling out while sessions call: a `used` signal, at most every so often. */
  private keepServer(clusterId: string, force = false): void {
    const t = this.now();
    const every = Math.min(60_000, this.deps.config.CONNECT_IDLE_MS / 3);
    if (!force && t - (this.signalled.get(clusterId) ?? 0) < every) return;
    this.signalled.set(clusterId, t);
    void serverUsed(this.deps, clusterId).catch(() => undefined);
  }

  private async sweep(): Promise<void> {
    const t = this.now();
    const idle = this.deps.config.CONNECT_SESSION_IDLE_MS;
    const ends: Promise<void>[] = [];
    const busy = new Set<string>();
    for (const s of this.live.values()) {
      if (s.inFlight > 0) {
        // A call still running (a long query) is use.
        s.record.lastUsed = t;
        this.writeLastUsed(s, t);
        busy.add(s.record.clusterId);
      } else if (t - s.record.lastUsed > idle)
        ends.push(this.end(s.record.id, `no call for ${Math.round(idle / 1000)} s (CONNECT_SESSION_IDLE_MS)`));
      else if (s.disconnectedAt !== undefined && t - s.disconnectedAt > this.graceMs)
        ends.push(this.end(s.record.id, 'its client disconnected'));
      else busy.add(s.record.clusterId);
    }
    await Promise.all(ends);
    // Sessions ended elsewhere (DELETE /connect/session/{id}, another gateway): refused from now on.
    if (this.live.size) {
      const gone = await sessionsOf(this.deps)
        .find({ _id: { $in: [...this.live.keys()] }, state: ENDED } as Document, { projection: { endReason: 1 } })
        .toArray();
      for (const g of gone) {
        const s = this.live.get(String(g._id));
        if (!s) continue;
        this.live.delete(s.record.id);
        this.remember(s.record.id, s.record.principal, String(g.endReason ?? 'it was ended'));
      }
    }
    // Sessions a gateway that is gone left ACTIVE (a crashed API process): idle by their records, so they end
    // here, and stop counting against their principal's limit. A live one elsewhere writes lastUsed every 30 s.
    const stale = await sessionsOf(this.deps)
      .find({ state: ACTIVE, lastUsed: { $lt: t - idle - 2 * TOUCH_WRITE_MS } } as Document)
      .limit(100)
      .toArray();
    for (const d of stale) {
      if (this.live.has(String(d._id))) continue;
      const reason = `no call for ${Math.round(idle / 1000)} s (CONNECT_SESSION_IDLE_MS; its gateway had stopped)`;
      const r = await sessionsOf(this.deps).updateOne({ _id: d._id, state: ACTIVE } as Document, {
        $set: { state: ENDED, endTime: t, endReason: reason },
      });
      if (r.modifiedCount) await this.audit(d as unknown as ConnectSessionRecord, 'end', reason);
    }
    // Open sessions keep their servers up even while they do not call.
    for (const clusterId of busy) this.keepServer(clusterId);
  }

  private async audit(r: ConnectSessionRecord, what: 'start' | 'end', reason?: string, who?: Principal): Promise<void> {
    const doc: AuditDoc & Record<string, unknown> = {
      _id: randomUUID(),
      principal: r.principal,
      role: who?.role ?? null,
      method: 'GRPC',
      path: `/connect/session/${what}`,
      resourceId: r.id,
      status: 200,
      time: this.now(),
      clusterName: r.clusterName,
      ...(reason ? { reason } : {}),
    };
    await this.deps.store
      .col(Collections.audit)
      .insertOne(doc as never)
      .catch((e: unknown) => log.warn('audit record not written', { err: String(e) }));
  }
}

/** An API error of a server start as a gRPC status: 402 over a limit, 404 missing, 409 cannot. */
export function toGrpc(e: unknown): GrpcError {
  if (e instanceof GrpcError) return e;
  if (e instanceof ApiError) {
    const code =
      e.status === 402
        ? GrpcStatus.RESOURCE_EXHAUSTED
        : e.status === 404
          ? GrpcStatus.NOT_FOUND
          : e.status === 503
            ? GrpcStatus.UNAVAILABLE
            : GrpcStatus.FAILED_PRECONDITION;
    return new GrpcError(code, e.message);
  }
  throw e;
}
