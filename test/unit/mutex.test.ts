import { describe, expect, it } from 'vitest';
import { Mutex } from '../../workflows/mutex';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('workflow Mutex', () => {
  it('runs holders one at a time, in order, even when one fails', async () => {
    const m = new Mutex();
    const log: string[] = [];
    const hold = (name: string, fail = false) =>
      m.runExclusive(async () => {
        log.push(`${name}+`);
        await tick();
        log.push(`${name}-`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([hold('a'), hold('b', true), hold('c')]);
    expect(log).toEqual(['a+', 'a-', 'b+', 'b-', 'c+', 'c-']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('idle() waits for holders that join while it waits', async () => {
    const m = new Mutex();
    let done = 0;
    void m.runExclusive(async () => {
      await tick();
      void m.runExclusive(async () => {
        await tick();
        done += 1;
      });
      done += 1;
    });
    await m.idle();
    expect(done).toBe(2);
  });
});
