// uploadArtifacts against an object store whose calls the test ends by hand: a failure stops new uploads,
// and the call returns only once the uploads in flight have ended (nothing of a failed launch still reads
// the artifact store after it; CI once saw a stream opened after its launch had failed).
import { describe, expect, it } from 'vitest';
import { uploadArtifacts } from '../../activities/adapters/k8s/artifact-store';
import type { ObjectStore } from '../../activities/adapters/k8s/options';

function handStore() {
  const calls: { key: string; end: (e?: Error) => void }[] = [];
  const store: ObjectStore = {
    put: (_bucket, key) =>
      new Promise<void>((resolve, reject) => calls.push({ key, end: (e) => (e ? reject(e) : resolve()) })),
    deletePrefix: async () => {},
    ensureFolder: async () => {},
    get: async () => false,
  };
  return { store, calls };
}
const tick = () => new Promise((r) => setTimeout(r, 5));
const uploads = (n: number) => Array.from({ length: n }, (_, i) => ({ file: `/store/f${i}`, key: `k${i}` }));

describe('uploadArtifacts', () => {
  it('uploads three at a time and every file once', async () => {
    const { store, calls } = handStore();
    const done = uploadArtifacts(store, 'b', uploads(5));
    await tick();
    expect(calls.map((c) => c.key)).toEqual(['k0', 'k1', 'k2']);
    calls[1].end();
    await tick();
    expect(calls.map((c) => c.key)).toEqual(['k0', 'k1', 'k2', 'k3']);
    for (const c of calls) c.end();
    await tick();
    calls[4].end();
    await expect(done).resolves.toBeUndefined();
    expect(calls.map((c) => c.key)).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
  });

  it('after a failure starts nothing new and answers once the uploads in flight have ended', async () => {
    const { store, calls } = handStore();
    let settled = false;
    const done = uploadArtifacts(store, 'b', uploads(6)).finally(() => (settled = true));
    done.catch(() => {});
    await tick();
    calls[0].end(Object.assign(new Error('gone'), { code: 'ENOENT' }));
    await tick();
    expect(calls).toHaveLength(3); // no fourth upload after the failure
    expect(settled).toBe(false); // two still in flight
    calls[1].end();
    await tick();
    expect(settled).toBe(false);
    calls[2].end(new Error('a second failure is not the one reported'));
    await expect(done).rejects.toMatchObject({
      message: 'artifact /store/f0 is missing from the artifact store',
      nonRetryable: true,
    });
    expect(calls).toHaveLength(3);
  });
});
