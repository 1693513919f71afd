// One durable engine: the state machine of an SQL engine (sql-engine.ts) and of a Spark Connect server
// (connect-server.ts), which keep one driver per cluster alike: launch it through activities and wait until it
// answers, watch it, restart a dead one (FAILED after too many deaths), stop when idle, on request or on
// cluster deletion, keep search attributes and a read-model record. What differs between the two is an
// EngineKind (sql-engine-entity.ts, connect-server-entity.ts): ids, the driver spec, the readiness activity,
// the record's collection, search attributes, the words of its messages, and whether a stop is streamed.
// Over 300 lines on purpose: one state machine whose transitions read together with the diagrams.
//
// Replay: running workflows of both types must go on across a deploy, so every kind's commands stay in the
// order the two copies issued them (engine-workflow-replay.test.ts replays histories of both).
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';
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
import { hostAbsentMessage, type DriverHost } from '../domain/hosts';
// Connect servers' states are the same four words (domain/connect.ts).
import {
  SqlEngineState as EngineState,
  type EngineEndpoint,
  type SqlEngineRecord,
  type SqlEngineWorkflowInput,
} from '../domain/sql-engine';
import { isHostAbsent, onHost, type DriverSets } from './activity-options';
import { removeDriver } from './driver-removal';
import { launchUntilDeadline } from './launch';
import { setSearch } from './search';
import { ENSURE_AFTER_WRITE } from './patches';
import { WriteVersions } from './versions';

/** The read-model record both kinds keep: an SQL engine's but its type (a ConnectServerRecord is exactly this). */
export type EngineRecord = Omit<SqlEngineRecord, 'type'>;

/** The workflow input both kinds take: an SQL engine's but its type, resuming with the kind's own record. */
export type EngineInput<R extends EngineRecord> = Omit<SqlEngineWorkflowInput, 'type' | 'resume'> & {
  resume?: Omit<NonNullable<SqlEngineWorkflowInput['resume']>, 'record'> & { record: R };
};

/** What one kind of engine is: everything the state machine does not share. */
export interface EngineKind<I extends EngineInput<R>, R extends EngineRecord> {
  /** The record of a new engine, STARTING at generation 0. */
  newRecord(input: I): R;
  /** The driver id of a generation: a new one each, never found again once dead. */
  driverId(input: I, generation: number): string;
  spec(input: I, record: R, driverId: string): DriverSpec;
  /** Waits (an activity on the driver's host) until the launched driver answers; its endpoint. */
  awaitReady(sets: DriverSets, input: I, driverId: string): Promise<EngineEndpoint>;
  /** Search attributes set once at the start of every run (the state follows each write). */
  search(input: I, record: R): Parameters<typeof setSearch>[0];
  project(record: R, version: number): Promise<unknown>;
  deleteRecord(id: string): Promise<void>;
  /** Whether a stop writes the STOPPED record before deleting it (so a stream of the records shows the stop). */
  writesStop: boolean;
  /** The words of its failures and reasons. */
  text: {
    /** In "… was stopped: <reason>" and "…'s driver ended". */
    name: string;
    /** In "… is stopping (<reason>); try again". */
    stopping(input: I): string;
    /** Why an idle one stops, after `seconds` without use. */
    idle(seconds: number): string;
  };
}

/** The messages of one kind's workflow, defined beside its workflow function (the API uses them by name). */
export interface EngineMessages<R> {
  query: QueryDefinition<R>;
  ensure: UpdateDefinition<R, [{ force: boolean; wait: boolean }]>;
  stop: UpdateDefinition<void, [string]>;
  used: SignalDefinition;
}

export type Step = 'again' | 'stopped' | 'continue-as-new';

/** The workflow function of a kind: handlers, then steps until stopped, continuing as new when told. */
export async function runEngineWorkflow<I extends EngineInput<R>, R extends EngineRecord>(
  kind: EngineKind<I, R>,
  messages: EngineMessages<R>,
  input: I,
): Promise<void> {
  const e = new EngineEntity(kind, input);
  setHandler(messages.query, () => e.record);
  setHandler(messages.ensure, (opts) => e.ensure(opts), { validator: (_opts) => e.checkNotStopping() });
  setHandler(messages.stop, (reason) => e.requestStop(reason));
  setHandler(messages.used, () => e.used());

  try {
    await e.begin();
    for (;;) {
      const next = await e.step();
      if (next === 'stopped') break;
      if (next === 'continue-as-new') {
        await condition(allHandlersFinished);
        // The current workflow type: sqlEngineWorkflow or connectServerWorkflow.
        await continueAsNew(e.continueInput());
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled by an operator (Temporal UI): the engine must not outlive its workflow.
    await CancellationScope.nonCancellable(() => e.stopNow('workflow cancelled'));
    throw err;
  }
  await condition(allHandlersFinished);
}

export class EngineEntity<I extends EngineInput<R>, R extends EngineRecord> {
  record: R;
  private readonly versions: WriteVersions;
  private lastUsed: number;
  private usedBump = 0;
  /** The engine's recent deaths (SQL_ENGINE_CRASH_LOOP: too many within the window and it is FAILED). */
  private crash: CrashLoop;
  /** Set by ensure on a FAILED engine, or by force on a STARTING one: launch a new generation. */
  private relaunch = false;
  private stopReason: string | undefined;
  private stopped = false;
  private launchScope: CancellationScope | undefined;
  /** Read-model writes under way (the record holds a state the read model may not have yet). */
  private writes = 0;
  /** The worker host that owns the current driver (local clusters), from its launch: every call on it runs there. */
  private host: DriverHost | undefined;

  constructor(
    private readonly kind: EngineKind<I, R>,
    private readonly input: I,
  ) {
    const r = input.resume;
    this.versions = new WriteVersions(r?.version ?? 0);
    this.lastUsed = r?.lastUsed ?? Date.now();
    this.crash = crashLoopAt(r?.deaths ?? []);
    this.host = r?.host;
    this.record = r?.record ?? kind.newRecord(input);
  }

  // ---- messages -----------------------------------------------------------------------------------
  async ensure({ force, wait }: { force: boolean; wait: boolean }): Promise<R> {
    this.used();
    const { state } = this.record;
    if (state === EngineState.FAILED) this.relaunch = true;
    // A force on a STARTING engine starts a new generation, whether its launch is under way or its record is
    // still being written (launch() then launches nothing for the old one).
    if (force && state === EngineState.STARTING) {
      this.relaunch = true;
      this.launchScope?.cancel();
    }
    // Settled and written: a caller that reads the read model next (GET /sql/engine after a 409) sees this state.
    // Behind a patch: histories recorded before answered on the state alone (patches.ts).
    const written = wait && patched(ENSURE_AFTER_WRITE);
    if (wait)
      await condition(() => (this.settled() && (!written || this.writes === 0)) || this.stopReason !== undefined);
    if (this.stopReason !== undefined) {
      throw ApplicationFailure.nonRetryable(`${this.kind.text.name} was stopped: ${this.stopReason}`, 'EngineStopped');
    }
    return this.record;
  }

  checkNotStopping(): void {
    if (this.stopReason !== undefined) {
      throw new Error(`${this.kind.text.stopping(this.input)} is stopping (${this.stopReason}); try again`);
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
    return !this.relaunch && (this.record.state === EngineState.RUNNING || this.record.state === EngineState.FAILED);
  }

  // ---- the loop -----------------------------------------------------------------------------------
  async begin(): Promise<void> {
    setSearch(this.kind.search(this.input, this.record));
    if (!this.input.resume) await this.write({});
  }

  async step(): Promise<Step> {
    if (this.stopReason !== undefined) {
      await this.stop();
      return 'stopped';
    }
    switch (this.record.state) {
      case EngineState.STARTING:
        await this.launch();
        return 'again';
      case EngineState.RUNNING:
        return this.keepRunning();
      default:
        return this.waitWhileFailed();
    }
  }

  continueInput(): I {
    const resume = {
      record: this.record,
      version: this.versions.last,
      lastUsed: this.lastUsed,
      deaths: this.crash.times ?? [],
      ...(this.host ? { host: this.host } : {}),
    };
    return { ...this.input, resume };
  }

  /** Launches the next generation and waits until it answers: RUNNING, or FAILED with the reason. */
  private async launch(): Promise<void> {
    const generation = this.record.generation + 1;
    const driverId = this.kind.driverId(this.input, generation);
    this.relaunch = false;
    await this.write({
      state: EngineState.STARTING,
      generation,
      driverId,
      endpoint: undefined,
      startTime: undefined,
      host: undefined,
    });
    // A new driver: any worker may launch it (it answers with its host).
    this.host = undefined;
    // A stop or a force that came during the write: step() stops next, or launches the next generation, with
    // nothing launched for this one.
    if (this.stopReason !== undefined || this.relaunch) return;
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
    // activation as the answer, so the engine may have answered all the same.
    const interrupted = this.relaunch || this.stopReason !== undefined;
    if (endpoint && !interrupted) {
      // Nobody could use the engine while it started: its idle time counts from now.
      this.lastUsed = Date.now();
      await this.write({
        state: EngineState.RUNNING,
        endpoint,
        startTime: Date.now(),
        error: undefined,
        host: this.hostId(),
      });
      return;
    }
    // One its cluster will not let go of yet is removed in the background; the engine goes on.
    await CancellationScope.nonCancellable(() => removeDriver(this.input.clusterName, driverId, {}, this.host));
    if (interrupted) return;
    // The workflow itself was cancelled: its handler stops the engine.
    if (isCancellation(failure)) throw failure;
    await this.write({ state: EngineState.FAILED, error: failureMessage(failure) });
  }

  /**
   * Launches the driver and waits until it answers. Only the wait is cancelled: a launch cancelled in
   * flight goes on in its activity and would leave a driver behind that was already "removed".
   */
  private async startDriver(driverId: string): Promise<EngineEndpoint> {
    const { clusterName } = this.input;
    // A cluster that does not answer: the engine says why while it is STARTING, and fails at LAUNCH_DEADLINE_MS.
    const { status } = await CancellationScope.nonCancellable(() =>
      launchUntilDeadline({
        clusterName,
        spec: this.kind.spec(this.input, this.record, driverId),
        unreachable: (cause, since) => this.write({ error: unreachableError(cause, since) }),
      }),
    );
    this.host = status.host;
    return this.kind.awaitReady(onHost(this.host), this.input, driverId);
  }

  /** Watches the running engine until it dies, is stopped, idles out, or history asks for a new run. */
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
        this.stopReason ??= this.kind.text.idle(Math.round(this.input.idleStopMs / 1000));
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
    const what = `${this.kind.text.name}'s driver ended (${st.phase}${st.message ? `: ${st.message}` : ''})`;
    this.crash = afterFailure(this.crash, what, Date.now(), SQL_ENGINE_CRASH_LOOP);
    if (crashLooping(this.crash, SQL_ENGINE_CRASH_LOOP)) {
      const within = `${this.crash.failures} times within ${SQL_ENGINE_CRASH_LOOP.windowMs / 60_000} minutes`;
      const error = `${what}; it died ${within}, so it is not restarted again`;
      await this.write({ state: EngineState.FAILED, endpoint: undefined, error });
    } else {
      await this.write({ state: EngineState.STARTING, endpoint: undefined, error: `${what}; restarted` });
    }
  }

  private async waitWhileFailed(): Promise<Step> {
    const next = await this.waitIdle(() => false);
    if (this.relaunch && this.stopReason === undefined) {
      this.crash = noCrashLoop();
      await this.write({ state: EngineState.STARTING });
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
    if (this.kind.writesStop) {
      await this.write({ state: EngineState.STOPPED, endpoint: undefined, error: this.stopReason });
    } else {
      this.record = { ...this.record, state: EngineState.STOPPED, endpoint: undefined };
      setSearch({ jobState: EngineState.STOPPED });
    }
    await this.kind.deleteRecord(this.record.id);
    this.stopped = true;
  }

  /** Writes the record with `change` (undefined values removed); a kind's own fields never change. */
  private async write(change: Partial<EngineRecord>): Promise<void> {
    this.record = { ...this.record, ...change };
    for (const k of Object.keys(change) as (keyof EngineRecord)[]) {
      if (change[k] === undefined) delete this.record[k];
    }
    if (change.state) setSearch({ jobState: change.state });
    this.writes++;
    try {
      await this.kind.project(this.record, this.versions.next());
    } finally {
      this.writes--;
    }
  }
}
