// Launch at submit: which clusters' jobs the API launches, and when it removes what it launched.
import { describe, expect, it } from 'vitest';
import { createLaunchAtSubmit, launchOutlived } from '../../api/jobs/launch-at-submit';
import type { ClusterAdapter } from '../../domain/driver';
import type { JobWorkflowInput } from '../../domain/job';
import { JobState } from '../../domain/states';
import { loadConfig } from '../../lib/config';
import type { Store } from '../../lib/mongo';

describe('launchOutlived', () => {
  it('keeps the driver of a job still on its first try', () => {
    for (const state of [JobState.SUBMITTED, JobState.STARTING, JobState.BUSY, JobState.UNKNOWN])
      expect(launchOutlived({ state, attempt: 1 }, true)).toBe(false);
  });
  it('removes it once the job has ended or gone on to a later try', () => {
    for (const state of [JobState.FINISHED, JobState.FAILED, JobState.CANCELED])
      expect(launchOutlived({ state, attempt: 1 }, true)).toBe(true);
    expect(launchOutlived({ state: JobState.STARTING, attempt: 2 }, true)).toBe(true);
  });
  it('reads a missing record as deleted only when this API wrote it', () => {
    expect(launchOutlived(null, true)).toBe(true);
    expect(launchOutlived(null, false)).toBe(false);
  });
});

describe('createLaunchAtSubmit', () => {
  const input = { spec: { clusterName: 'c' }, maxRetries: 0 } as unknown as JobWorkflowInput;
  const setup = (mode: string, record: unknown) => {
    const calls: string[] = [];
    const adapter = {
      launch: async (spec: { driverId: string; labels: Record<string, string> }) => {
        calls.push(`launch ${spec.driverId} ${JSON.stringify(spec.labels)}`);
        return { phase: 'PENDING' };
      },
      remove: async (id: string) => void calls.push(`remove ${id}`),
    } as unknown as ClusterAdapter;
    const store = { col: () => ({ findOne: async () => record }) } as unknown as Store;
    const l = createLaunchAtSubmit(loadConfig({ LAUNCH_AT_SUBMIT: mode }), store, async () => adapter);
    return { l, calls };
  };

  it('launches the first try in the background, with the workflow’s driver id and labels', async () => {
    const { l, calls } = setup('all', { state: 'SUBMITTED', attempt: 1 });
    l.launch('j1', 'local', input, Promise.resolve(true));
    await l.drain(1000);
    expect(calls).toEqual(['launch job-j1-1 {"jobId":"j1"}']);
  });
  it('removes the driver when the job ended while it launched', async () => {
    const { l, calls } = setup('all', { state: 'CANCELED', attempt: 1 });
    l.launch('j2', 'k8s', input, Promise.resolve(true));
    await l.drain(1000);
    expect(calls).toEqual(['launch job-j2-1 {"jobId":"j2"}', 'remove job-j2-1']);
  });
  it('does nothing more when the cluster is gone by the time it launches', async () => {
    const store = { col: () => ({ findOne: async () => ({ state: 'CANCELED', attempt: 1 }) }) } as unknown as Store;
    let asked = 0;
    const l = createLaunchAtSubmit(loadConfig({ LAUNCH_AT_SUBMIT: 'all' }), store, async () => {
      asked++;
      throw new Error("cluster 'c' does not exist");
    });
    l.launch('j6', 'local', input, Promise.resolve(true));
    await l.drain(1000);
    expect(asked).toBe(1);
  });
  it('k8s: only k8s clusters; off: none', async () => {
    const k = setup('k8s', { state: 'SUBMITTED', attempt: 1 });
    k.l.launch('j3', 'local', input, Promise.resolve(true));
    k.l.launch('j4', 'k8s', input, Promise.resolve(true));
    await k.l.drain(1000);
    expect(k.calls).toEqual(['launch job-j4-1 {"jobId":"j4"}']);
    const off = setup('off', { state: 'SUBMITTED', attempt: 1 });
    off.l.launch('j5', 'k8s', input, Promise.resolve(true));
    await off.l.drain(1000);
    expect(off.calls).toEqual([]);
  });
});
