// The state of one Spark Connect server workflow and what its messages do to it (the diagram is in
// connect-server.ts). The same state machine as an SQL engine's (sql-engine-entity.ts), with a Connect
// server's launch and readiness; the gateway's `used` signals (a session started or called) keep it alive.
// Over 300 lines, and a near-copy of sql-engine-entity.ts: known duplication, to become one generic entity for
// both; until then a change to either state machine must be made in both.
import { ApplicationFailure, CancellationScope, condition, isCancellation, workflowInfo } from '@temporalio/workflow';
import {
  afterFailure,
  crashLoopAt,
  crashLooping,
  noCrashLoop,
  SQL_ENGINE_CRASH_LOOP,
  type CrashLoop,
} from '../domain/broken-clusters/crash-loops';
import { unreachableError } from '../domain/broken-clusters/unreachable';
import type { DriverSpec, DriverStatus } from '../domain/driver';
import { failureMessage } from '../domain/failure';
import {
  connectServerDriverId,
  connectServerId,
  ConnectServerState,
  type ConnectServerRecord,
  type ConnectServerWorkflowInput,
} from '../domain/connect';
import type { EngineEndpoint } from '../domain/sql-engine';
import { hostAbsentMessage, type DriverHost } from '../domain/hosts';
import { isHostAbsent, onHost, projection } from './activity-options';
import { removeDriver } from './driver-removal';
import { launchUntilDeadline } from './launch';
import { setSearch } from './search';
import { WriteVersions } from './versions';

export type Step = 'again' | 'stopped' | 'continue-as-new';

export class ConnectServerEntity {
  record: ConnectServerRecord;
  private readonly versions: WriteVersions;
  private lastUsed: number;
  private usedBump = 0;
  /** The server's recent deaths (SQL_ENGINE_CRASH_LOOP: too many within the window and it is FAILED). */
  private crash: CrashLoop;
  /** Set by ensure on a FAILED server, or by force on a STARTING one: launch a new generation. */
  private relaunch = false;
  private stopReason: string | undefined;
  private stopped = false;
  private launchScope: CancellationScope | undefined;
  /** The worker host that owns the current driver (local clusters), from its launch: every call on it runs there. */
  private host: DriverHost | undefined;

  constructor(private readonly input: ConnectServerWorkflowInput) {
    const r = input.resume;
    this.versions = new WriteVersions(r?.version ?? 0);
    this.lastUsed = r?.lastUsed ?? Date.now();
    this.crash = crashLoopAt(r?.deaths ?? []);
    this.host = r?.host;
    this.record = r?.record ?? {
      id: connectServerId(input.clusterId),
      clusterId: input.clusterId,
      clusterName: input.clusterName,
      state: ConnectServerState.STARTING,
      generation: 0,
      createdTime: input.createdTime,
    };
  }

  // ---- messages -----------------------------------------------------------------------------------
  async ensure({ force, wait }: { force: boolean; wait: boolean }): Promise<ConnectServerRecord> {
    this.used();
    const { state } = this.record;
    if (state === ConnectServerState.FAILED) this.relaunch = true;
    if (force && state === ConnectServerState.STARTING && this.launchScope) {
      this.relaunch = true;
      this.launchScope.cancel();
    }
    if (wait) await condition(() => this.settled() || this.stopReason !== undefined);
    if (this.stopReason !== undefined) {
      throw ApplicationFailure.nonRetryable(
        `the Spark Connect server was stopped: ${this.stopReason}`,
        'EngineStopped',
      );
    }
    return this.record;
  }

  checkNotStopping(): void {
    if (this.stopReason !== undefined) {
      throw new Error(`the Spark Connect server is stopping (${this.stopReason}); try again`);
    }
  }

  async requestStop(reason: string): Promise<void> {
    this.stopReason ??= reason;
    this.launchScope?.cancel();
    await condition(() => this.stopped);
  }

  used(): void {
    this.lastUsed = Date.now();
    this.usedBump++;
  }

  /** RUNNING or FAILED, with no relaunch pending: what an `ensure` with wait returns on. */
  private settled(): boolean {
    return (
      !this.relaunch &&
      (this.record.state === ConnectServerState.RUNNING || this.record.state === ConnectServerState.FAILED)
    );
  }

  // ---- the loop -----------------------------------------------------------------------------------
  async begin(): Promise<void> {
    setSearch({ clusterName: this.input.clusterName, jobType: 'CONNECT_SERVER' });
    if (!this.input.resume) await this.write({});
  }

  async step(): Promise<Step> {
    if (this.stopReason !== undefined) {
      await this.stop();
      return 'stopped';
    }
    switch (this.record.state) {
      case ConnectServerState.STARTING:
        await this.launch();
        return 'again';
      case ConnectServerState.RUNNING:
        return this.keepRunning();
      default:
        return this.waitWhileFailed();
    }
  }

  continueInput(): ConnectServerWorkflowInput {
    const resume = {
      record: this.record,
      version: this.versions.last,
      lastUsed: this.lastUsed,
      deaths: this.crash.times ?? [],
      ...(this.host ? { host: this.host } : {}),
    };
    return { ...this.input, resume };
  }

  private spec(driverId: string): DriverSpec {
    const { clusterId, spark } = this.input;
    return { driverId, role: 'connect-server', spark, env: {}, labels: { connectServerId: this.record.id, clusterId } };
  }

  /** Launches the next generation and waits until it answers: RUNNING, or FAILED with the reason. */
  private async launch(): Promise<void> {
    const generation = this.record.generation + 1;
    const { clusterId, createdTime } = this.input;
    const driverId = connectServerDriverId(clusterId, generation, createdTime);
    await this.write({
      state: ConnectServerState.STARTING,
      generation,
      driverId,
      endpoint: undefined,
      startTime: undefined,
      host: undefined,
    });
    // A new driver: any worker may launch it (it answers with its host).
    this.host = undefined;
    this.relaunch = false;
    // A stop that came during the write: step() stops next, with nothing launched.
    if (this.stopReason !== undefined) return;
    const scope = new CancellationScope();
    this.launchScope = scope;
    let endpoint: EngineEndpoint | undefined;
    let failure: unknown;
    try {
      endpoint = await scope.run(() => this.startDriver(driverId));
    } catch (e) {
      failure = e;
    } finally {
      this.launchScope = undefined;
    }
    // Forced (a new generation follows) or stopping (step() stops next); a force can come in the same
    // activation as the answer, so the server may have answered all the same.
    const interrupted = this.relaunch || this.stopReason !== undefined;
    if (endpoint && !interrupted) {
      // Nobody could use the server while it started: its idle time counts from now.
      this.lastUsed = Date.now();
      await this.write({
        state: ConnectServerState.RUNNING,
        endpoint,
        startTime: Date.now(),
        error: undefined,
        host: this.hostId(),
      });
      return;
    }
    // One its cluster will not let go of yet is removed in the background; the server goes on.
    await CancellationScope.nonCancellable(() => removeDriver(this.input.clusterName, driverId, {}, this.host));
    if (interrupted) return;
    // The workflow itself was cancelled: its handler stops the server.
    if (isCancellation(failure)) throw failure;
    await this.write({ state: ConnectServerState.FAILED, error: failureMessage(failure) });
  }

  /**
   * Launches the driver and waits until it answers. Only the wait is cancelled: a launch cancelled in
   * flight goes on in its activity and would leave a driver behind that was already "removed".
   */
  private async startDriver(driverId: string): Promise<EngineEndpoint> {
    const { clusterName, startTimeoutMs } = this.input;
    // A cluster that does not answer: the server says why while it is STARTING, and fails at LAUNCH_DEADLINE_MS.
    const { status } = await CancellationScope.nonCancellable(() =>
      launchUntilDeadline({
        clusterName,
        spec: this.spec(driverId),
        unreachable: (cause, since) => this.write({ error: unreachableError(cause, since) }),
      }),
    );
    this.host = status.host;
    return onHost(this.host).engineStart(startTimeoutMs).awaitConnectServerReady(clusterName, driverId, startTimeoutMs);
  }

  /** Watches the running server until it dies, is stopped, idles out, or history asks for a new run. */
  private async keepRunning(): Promise<Step> {
    const { clusterName } = this.input;
    const driverId = this.record.driverId as string;
    let ended: DriverStatus | undefined;
    const scope = new CancellationScope();
    const watching = scope.run(async () => {
      let st: DriverStatus = { phase: 'RUNNING' };
      while (st.phase === 'RUNNING' || st.phase === 'UNKNOWN') st = await this.watchOnHost(clusterName, driverId, st);
      ended = st;
    });
    watching.catch(() => undefined);
    const next = await this.waitIdle(() => ended !== undefined);
    scope.cancel();
    if (ended) await this.died(ended);
    return next;
  }

  /** The id of the current driver's host (set by startDriver, which TypeScript's narrowing does not see). */
  private hostId(): string | undefined {
    return this.host?.id;
  }

  /** One watch of the driver on its host; a host with no worker is UNKNOWN with the cause (watched again). */
  private async watchOnHost(clusterName: string, driverId: string, known: DriverStatus): Promise<DriverStatus> {
    try {
      return await onHost(this.host).watch.watchDriver(clusterName, driverId, known);
    } catch (e) {
      if (this.host && isHostAbsent(e)) return { phase: 'UNKNOWN', message: hostAbsentMessage(this.host) };
      throw e;
    }
  }

  /** Waits until `done()`, a stop, the idle deadline (which becomes a stop), or a continue-as-new suggestion. */
  private async waitIdle(done: () => boolean): Promise<Step> {
    for (;;) {
      const remaining = this.lastUsed + this.input.idleStopMs - Date.now();
      if (remaining <= 0) {
        this.stopReason ??= `no session for ${Math.round(this.input.idleStopMs / 1000)} s (CONNECT_IDLE_MS)`;
        return 'again';
      }
      const bump = this.usedBump;
      const suggested = () => workflowInfo().continueAsNewSuggested;
      const woke = await condition(
        () => done() || this.relaunch || this.stopReason !== undefined || bump !== this.usedBump || suggested(),
        remaining,
      );
      if (done() || this.relaunch || this.stopReason !== undefined) return 'again';
      if (woke && suggested()) return 'continue-as-new';
    }
  }

  private async died(st: DriverStatus): Promise<void> {
    const { clusterName } = this.input;
    await onHost(this.host).drivers.removeDriver(clusterName, this.record.driverId as string);
    const what = `the Spark Connect server's driver ended (${st.phase}${st.message ? `: ${st.message}` : ''})`;
    this.crash = afterFailure(this.crash, what, Date.now(), SQL_ENGINE_CRASH_LOOP);
    if (crashLooping(this.crash, SQL_ENGINE_CRASH_LOOP)) {
      const within = `${this.crash.failures} times within ${SQL_ENGINE_CRASH_LOOP.windowMs / 60_000} minutes`;
      const error = `${what}; it died ${within}, so it is not restarted again`;
      await this.write({ state: ConnectServerState.FAILED, endpoint: undefined, error });
    } else {
      await this.write({ state: ConnectServerState.STARTING, endpoint: undefined, error: `${what}; restarted` });
    }
  }

  private async waitWhileFailed(): Promise<Step> {
    const next = await this.waitIdle(() => false);
    if (this.relaunch && this.stopReason === undefined) {
      this.crash = noCrashLoop();
      await this.write({ state: ConnectServerState.STARTING });
    }
    return next;
  }

  /** Stops at once (the workflow was cancelled). */
  async stopNow(reason: string): Promise<void> {
    this.stopReason ??= reason;
    await this.stop();
  }

  private async stop(): Promise<void> {
    const { driverId } = this.record;
    if (driverId)
      await CancellationScope.nonCancellable(() =>
        onHost(this.host).drivers.removeDriver(this.input.clusterName, driverId),
      );
    // Written before the record goes, so the server stream shows the stop (a delete is not streamed).
    await this.write({ state: ConnectServerState.STOPPED, endpoint: undefined, error: this.stopReason });
    await projection.deleteConnectServerRecord(this.record.id);
    this.stopped = true;
  }

  private async write(change: Partial<ConnectServerRecord>): Promise<void> {
    this.record = { ...this.record, ...change };
    for (const k of Object.keys(change) as (keyof ConnectServerRecord)[]) {
      if (change[k] === undefined) delete this.record[k];
    }
    if (change.state) setSearch({ jobState: change.state });
    await projection.projectConnectServer(this.record, this.versions.next());
  }
}
