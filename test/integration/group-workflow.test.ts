// The group workflow on a real Temporal dev server with replaced activities: scale, replacing a dead
// instance, rescale draining, updates that restart instances, autoPause and wake, archive.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDriverId } from '../../domain/group';
import {
  acceptedGroupUpdate,
  archiveUpdate,
  groupQuery,
  instanceStateSignal,
  pauseUpdate,
  rescaleUpdate,
  restartUpdate,
  resumeUpdate,
  updateGroupUpdate,
  wakeSignal,
} from '../../workflows/group';
import { fakeCluster } from './fake-activities';
import { groupTools } from './group-fixture';
import { eventually, startWorkflowEnv, type WorkflowTestEnv } from './workflow-env';

const cluster = fakeCluster({ phase: 'RUNNING' });
let t: WorkflowTestEnv;
const g = groupTools(() => t, cluster);

beforeAll(async () => {
  t = await startWorkflowEnv(cluster.activities);
});
afterAll(async () => t?.stop());

describe('group workflow', () => {
  it('keeps scale instances; scaling down stops the not-ready and idle ones first, busy ones last', async () => {
    const { id, h } = await g.start({ scale: 2 });
    expect(await h.executeUpdate(acceptedGroupUpdate)).toEqual({ groupId: id });
    await g.liveAre(id, [`${id}-1`, `${id}-2`]);
    await g.ready(h, `${id}-1`, `${id}-2`);
    await g.busy(h, `${id}-1`, true);

    await h.executeUpdate(rescaleUpdate, { args: [3] });
    expect(cluster.read.group(id)?.scale).toBe(3);
    await g.liveAre(id, [`${id}-1`, `${id}-2`, `${id}-3`]);

    await h.executeUpdate(rescaleUpdate, { args: [1] });
    await g.liveAre(id, [`${id}-1`]);
    expect(g.state(`${id}-2`)).toBe('FINISHED');
    expect(g.state(`${id}-3`)).toBe('FINISHED');
    // Drivers are removed in the background, after the records say FINISHED.
    await eventually(
      () => [2, 3].every((i) => cluster.removed.includes(instanceDriverId(`${id}-${i}`))),
      20_000,
      'drivers removed',
    );

    await h.executeUpdate(rescaleUpdate, { args: [0] });
    // The busy instance drains: it stops only once its execution ends. The update has been handled (its
    // answer came), so the workflow's own record already shows what it decided.
    const live = (await h.query(groupQuery)).instances.filter((j) => !['FINISHED', 'FAILED'].includes(j.state));
    expect(live.map((j) => [j.jobId, j.state])).toEqual([[`${id}-1`, 'BUSY']]);
    expect(g.state(`${id}-1`)).toBe('BUSY');
    await h.signal(instanceStateSignal, { instanceId: `${id}-1`, state: 'READY' });
    await eventually(() => g.state(`${id}-1`) === 'FINISHED', 20_000, 'busy instance stopped once idle');

    await expect(h.executeUpdate(rescaleUpdate, { args: [5] })).rejects.toThrow();
    expect(cluster.read.group(id)?.scale).toBe(0);
  });

  it('replaces an instance whose driver died, recording why', async () => {
    const { id, h } = await g.start({ scale: 1 });
    await g.liveAre(id, [`${id}-1`]);
    await g.ready(h, `${id}-1`);
    cluster.set(instanceDriverId(`${id}-1`), 'FAILED', { message: 'java.lang.OutOfMemoryError' });
    await g.liveAre(id, [`${id}-2`]);
    expect(cluster.read.job(`${id}-1`)).toMatchObject({ state: 'FAILED', error: 'java.lang.OutOfMemoryError' });
    await eventually(() => cluster.removed.includes(instanceDriverId(`${id}-1`)), 20_000, 'dead driver removed');
  });

  it('an update of Spark settings restarts instances, the old ones serving until a new one is ready', async () => {
    const { id, h } = await g.start({ scale: 2 });
    await g.liveAre(id, [`${id}-1`, `${id}-2`]);
    await g.ready(h, `${id}-1`, `${id}-2`);

    await h.executeUpdate(updateGroupUpdate, { args: [{ description: 'only words' }] });
    expect(cluster.read.group(id)?.description).toBe('only words');
    expect((await h.query(groupQuery)).generation).toBe(1);

    await h.executeUpdate(updateGroupUpdate, { args: [{ jobConfig: { 'spark.sql.shuffle.partitions': '4' } }] });
    expect(cluster.read.group(id)?.jobConfig).toEqual({ 'spark.sql.shuffle.partitions': '4' });
    expect((await h.query(groupQuery)).generation).toBe(2);
    await g.liveAre(id, [`${id}-1`, `${id}-2`, `${id}-3`, `${id}-4`]);
    const relaunch = cluster.launches.find((l) => l.driverId === instanceDriverId(`${id}-3`))!;
    expect(relaunch.spark.jobConfig).toEqual({ 'spark.sql.shuffle.partitions': '4' });
    expect(g.state(`${id}-1`)).toBe('READY');

    await g.ready(h, `${id}-3`);
    await g.liveAre(id, [`${id}-3`, `${id}-4`]);
    expect(g.state(`${id}-1`)).toBe('FINISHED');
    expect(g.state(`${id}-2`)).toBe('FINISHED');
  });

  it('pauses on request (drivers stop, scale kept, a wake does not resume), resumes, and restarts', async () => {
    const { id, h } = await g.start({ scale: 2 });
    await g.liveAre(id, [`${id}-1`, `${id}-2`]);
    await g.ready(h, `${id}-1`, `${id}-2`);

    await h.executeUpdate(pauseUpdate);
    expect(cluster.read.group(id)).toMatchObject({ paused: true, scale: 2, state: 'ACTIVE' });
    await g.liveAre(id, []);
    await h.signal(wakeSignal);
    // A query is answered after the events recorded before it, the wake among them: no instance was started.
    expect((await h.query(groupQuery)).instances.filter((j) => !['FINISHED', 'FAILED'].includes(j.state))).toEqual([]);
    expect(g.live(id)).toEqual([]);

    await h.executeUpdate(resumeUpdate);
    expect(cluster.read.group(id)?.paused).toBe(false);
    await g.liveAre(id, [`${id}-3`, `${id}-4`]);
    await g.ready(h, `${id}-3`, `${id}-4`);

    // Restart: a new generation; the old drivers serve until a new one is READY.
    await h.executeUpdate(restartUpdate);
    await g.liveAre(id, [`${id}-3`, `${id}-4`, `${id}-5`, `${id}-6`]);
    expect(g.state(`${id}-3`)).toBe('READY');
    await g.ready(h, `${id}-5`);
    await g.liveAre(id, [`${id}-5`, `${id}-6`]);

    await h.executeUpdate(archiveUpdate);
    await expect(h.executeUpdate(pauseUpdate)).rejects.toThrow();
  });

  it('autoPause stops the drivers of an idle group; a wake starts them again', async () => {
    const { id, h } = await g.start({ scale: 1, autoPause: true }, { idlePauseMs: 1_500 });
    await g.liveAre(id, [`${id}-1`]);
    await g.ready(h, `${id}-1`);
    await eventually(async () => (await h.query(groupQuery)).paused, 20_000, 'paused');
    await g.liveAre(id, []);
    expect(g.state(`${id}-1`)).toBe('FINISHED');
    await eventually(() => cluster.removed.includes(instanceDriverId(`${id}-1`)), 20_000, 'paused driver removed');

    await h.signal(wakeSignal);
    await g.liveAre(id, [`${id}-2`]);
    expect((await h.query(groupQuery)).paused).toBe(false);
  });

  it('a wake that comes while the loop writes is not lost: the drivers start once the write ends', async () => {
    const { id, h } = await g.start({ scale: 1, autoPause: true }, { idlePauseMs: 1_000 });
    await g.liveAre(id, [`${id}-1`]);
    await g.ready(h, `${id}-1`);
    await eventually(async () => (await h.query(groupQuery)).paused, 20_000, 'paused');
    await eventually(() => cluster.removed.includes(instanceDriverId(`${id}-1`)), 20_000, 'paused driver removed');

    // An update makes the loop write; the wake arrives while that write is under way.
    const release = cluster.read.holdGroupWrites();
    const updated = h.executeUpdate(updateGroupUpdate, { args: [{ description: 'while writing' }] });
    const writing = async () =>
      (await h.describe()).raw.pendingActivities?.some((a) => a.activityType?.name === 'projectGroupStep');
    await eventually(writing, 20_000, 'write begun');
    await h.signal(wakeSignal);
    release();
    await updated;
    await g.liveAre(id, [`${id}-2`]);
    expect((await h.query(groupQuery)).paused).toBe(false);
  });

  it('archive stops every instance and ends the workflow', async () => {
    const { id, h } = await g.start({ scale: 2 });
    await g.liveAre(id, [`${id}-1`, `${id}-2`]);
    await g.ready(h, `${id}-1`);
    await h.executeUpdate(archiveUpdate);
    expect(cluster.read.group(id)).toMatchObject({ state: 'ARCHIVED' });
    expect(cluster.read.group(id)?.archivedTime).toBeGreaterThan(0);
    await h.result();
    expect(g.live(id)).toEqual([]);
    expect(cluster.removed).toEqual(expect.arrayContaining([instanceDriverId(`${id}-1`), instanceDriverId(`${id}-2`)]));
  });
});
