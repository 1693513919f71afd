// activities/heartbeat.ts: a launch or removal under way heartbeats; one that ends at once sends nothing.
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { heartbeating } from '../../activities/heartbeat';

function recorded() {
  const env = new MockActivityEnvironment();
  const beats: number[] = [];
  env.on('heartbeat', () => beats.push(Date.now()));
  return { env, beats };
}

const after = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

describe('heartbeating', () => {
  it('heartbeats every interval while the work runs, and stops when it ends', async () => {
    const { env, beats } = recorded();
    expect(await env.run(() => heartbeating(after(230, 'launched'), 50))).toBe('launched');
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(beats.length).toBeLessThanOrEqual(5);
    const seen = beats.length;
    await after(150, undefined);
    expect(beats.length).toBe(seen);
  });

  it('sends no heartbeat for work that ends before the first interval', async () => {
    const { env, beats } = recorded();
    expect(await env.run(() => heartbeating(after(5, 42), 1000))).toBe(42);
    await after(20, undefined);
    expect(beats).toEqual([]);
  });

  it('passes the work’s failure on, and stops heartbeating', async () => {
    const { env, beats } = recorded();
    const failing = after(120, undefined).then(() => {
      throw new Error('cluster refused');
    });
    await expect(env.run(() => heartbeating(failing, 40))).rejects.toThrow('cluster refused');
    const seen = beats.length;
    expect(seen).toBeGreaterThanOrEqual(2);
    await after(120, undefined);
    expect(beats.length).toBe(seen);
  });
});
