// Group workflow `group/<groupId>`: an entity workflow that keeps `scale` interactive drivers (instances)
// alive. Each instance is a Spark driver running runner/runner.py, polling the group's task queue, and an
// INTERACTIVE job in the read model.
//
//   instance:  STARTING ──(runner signals instanceReady)──▶ READY ⇄ BUSY (instanceState signals)
//                 │                                          │
//                 └──────── driver died ──▶ FAILED (replaced) ┘── scale down / update / pause / archive ──▶ FINISHED
//   group:     ACTIVE ──archive──▶ ARCHIVED (all instances stopped, then the workflow ends)
//
// The messages are defined here (the API and the runner use them by these names); what they do is in
// GroupEntity (group-entity.ts), and the decisions it makes are pure functions in domain/.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  defineUpdate,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DirectEndpoint, GroupSettingsPatch, GroupSummary, GroupWorkflowInput } from '../domain/group';
import { checkActive, checkArchivable, checkGroupPatch, checkScale } from '../domain/group-settings';
import { GroupEntity } from './group-entity';

/** Resolves once the group's first record is in the read model (read-your-writes for the creating API). */
export const acceptedGroupUpdate = defineUpdate<{ groupId: string }>('accepted');
export const rescaleUpdate = defineUpdate<void, [number]>('rescale');
export const updateGroupUpdate = defineUpdate<void, [GroupSettingsPatch]>('update');
export const archiveUpdate = defineUpdate<void>('archive');
/** Pause on request: the drivers stop, the group keeps its scale, executions are refused until resume. */
export const pauseUpdate = defineUpdate<void>('pause');
export const resumeUpdate = defineUpdate<void>('resume');
/** Replaces every driver, each kept until its replacement is READY, so a group of scale ≥ 2 keeps answering. */
export const restartUpdate = defineUpdate<void>('restart');
/** Sent before an execution when the group may have paused its drivers (autoPause). */
export const wakeSignal = defineSignal('wake');
/** Sent by a runner once it polls the group's task queue. */
export const instanceReadySignal =
  defineSignal<[{ instanceId: string; appId?: string; endpoint?: string }]>('instanceReady');
/** Sent by a runner around each execution. */
export const instanceStateSignal = defineSignal<[{ instanceId: string; state: 'BUSY' | 'READY' }]>('instanceState');
export const groupQuery = defineQuery<GroupSummary>('group');
/** READY instances with a direct execute channel, for the API's synchronous executions. */
export const directEndpointsQuery = defineQuery<DirectEndpoint[]>('directEndpoints');

export async function groupWorkflow(input: GroupWorkflowInput): Promise<void> {
  const g = new GroupEntity(input);
  setHandler(groupQuery, () => g.summary());
  setHandler(acceptedGroupUpdate, () => g.accepted());
  setHandler(rescaleUpdate, (scale) => g.rescale(scale), {
    validator: (scale) => checkScale(g.group, scale, input.maxScale),
  });
  setHandler(updateGroupUpdate, (patch) => g.update(patch), {
    validator: (patch) => checkGroupPatch(g.group, patch, input.maxScale),
  });
  setHandler(archiveUpdate, () => g.archive(), { validator: () => checkArchivable(g.group) });
  setHandler(pauseUpdate, () => g.pause(), { validator: () => checkActive(g.group) });
  setHandler(resumeUpdate, () => g.resume(), { validator: () => checkActive(g.group) });
  setHandler(restartUpdate, () => g.restart(), { validator: () => checkActive(g.group) });
  setHandler(wakeSignal, () => g.wake());
  setHandler(directEndpointsQuery, () => g.directEndpoints());
  setHandler(instanceReadySignal, ({ instanceId, appId, endpoint }) => g.instanceReady(instanceId, appId, endpoint));
  setHandler(instanceStateSignal, ({ instanceId, state }) => g.instanceState(instanceId, state));

  g.begin();
  for (;;) {
    g.step();
    await g.flush();
    if (g.finished()) {
      await condition(allHandlersFinished);
      return;
    }
    if (workflowInfo().continueAsNewSuggested && g.settled()) {
      // An update that arrives meanwhile waits for a write, which only the loop makes: go on looping.
      await condition(() => allHandlersFinished() || !g.settled());
      if (g.settled()) await continueAsNew<typeof groupWorkflow>(g.continueInput());
    }
    await g.waitForChange();
  }
}
