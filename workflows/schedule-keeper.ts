// The state of one schedule keeper workflow and what its messages do to it. Every change is applied to
// the Temporal Schedule, then to the read model, under one mutex: handlers await activities and then
// change state, so two changes never interleave, and an update returns only once both show it.
import { allHandlersFinished, ApplicationFailure, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { failureMessage } from '../domain/failure';
import type { ScheduleSettingsPatch, ScheduleWorkflowInput } from '../domain/schedule';
import { applySchedulePatch, disableDueIn, temporalScheduleDef, withScheduleState } from '../domain/schedule-settings';
import { ScheduleState } from '../domain/states';
import { projection, short } from './activity-options';
import { Mutex } from './mutex';
import { setSearch } from './search';
import { WriteVersions } from './versions';

type ScheduleRecord = ScheduleWorkflowInput['schedule'];

export class ScheduleKeeper {
  schedule: ScheduleRecord;
  private spec: ScheduleWorkflowInput['spec'];
  private readonly versions: WriteVersions;
  private projectedOnce: boolean;
  /** Why the first apply failed (the create request then fails with it). */
  private initError: string | undefined;
  private deleted = false;
  private readonly lock = new Mutex();

  constructor(private readonly input: ScheduleWorkflowInput) {
    this.schedule = { ...input.schedule };
    this.spec = { ...input.spec };
    this.versions = new WriteVersions(input.resume?.seq ?? 0);
    this.projectedOnce = input.resume !== undefined;
  }

  // ---- messages -----------------------------------------------------------------------------------
  async accepted(): Promise<{ scheduleId: string }> {
    await condition(() => this.projectedOnce || this.initError !== undefined);
    if (this.initError !== undefined) throw ApplicationFailure.nonRetryable(this.initError, 'InvalidSchedule');
    return { scheduleId: this.schedule.id };
  }

  update(patch: ScheduleSettingsPatch): Promise<void> {
    return this.lock.runExclusive(() => {
      const next = applySchedulePatch(this.schedule, this.spec, patch);
      return this.commit(next.schedule, next.spec);
    });
  }

  setState(state: ScheduleState): Promise<void> {
    return this.lock.runExclusive(() => this.commit(withScheduleState(this.schedule, state, Date.now()), this.spec));
  }

  delete(): Promise<void> {
    return this.lock.runExclusive(async () => {
      await short.deleteTemporalSchedule(this.schedule.id);
      await short.deleteScheduleRecord(this.schedule.id, this.schedule.name);
      this.deleted = true;
    });
  }

  /** Rejects any change after delete. */
  checkNotDeleted(): void {
    if (this.deleted) throw new Error(`schedule '${this.schedule.name}' is deleted`);
  }

  // ---- life ---------------------------------------------------------------------------------------
  /**
   * Creates the Temporal Schedule and the first record. False when Temporal refused it (a cron it
   * cannot parse, say): whatever was created is removed and the workflow ends.
   */
  async begin(): Promise<boolean> {
    if (this.input.resume) return true;
    setSearch({ scheduleId: this.schedule.id, clusterName: this.schedule.clusterName, jobType: 'SINGLE' });
    try {
      await this.lock.runExclusive(() => this.commit(this.schedule, this.spec));
      return true;
    } catch (e) {
      this.initError = failureMessage(e);
      await short.deleteTemporalSchedule(this.schedule.id);
      return false;
    }
  }

  /** Keeps the schedule until it is deleted: disables it at its endTime, continues as new when suggested. */
  async keep(): Promise<void> {
    for (;;) {
      const dueIn = disableDueIn(this.schedule, Date.now());
      if (dueIn !== undefined && dueIn <= 0) {
        await this.setState(ScheduleState.DISABLED);
        continue;
      }
      const before = this.versions.last;
      const woken = () => this.deleted || this.versions.last !== before || workflowInfo().continueAsNewSuggested;
      if (dueIn === undefined) await condition(woken);
      else await condition(woken, dueIn);
      if (this.deleted) return;
      if (workflowInfo().continueAsNewSuggested) {
        await this.lock.idle();
        await condition(allHandlersFinished);
        await continueAsNew<(input: ScheduleWorkflowInput) => Promise<void>>({
          ...this.input,
          schedule: this.schedule,
          spec: this.spec,
          resume: { seq: this.versions.last },
        });
      }
    }
  }

  /** Applies a new version to Temporal, then to the read model; nothing changes when Temporal refuses it. */
  private async commit(next: ScheduleRecord, nextSpec: ScheduleWorkflowInput['spec']): Promise<void> {
    await short.applyTemporalSchedule(temporalScheduleDef(next, nextSpec, this.input.taskQueue));
    this.schedule = next;
    this.spec = nextSpec;
    await projection.projectSchedule({ ...this.schedule }, this.versions.next());
    this.projectedOnce = true;
  }
}
