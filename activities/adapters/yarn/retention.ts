// What yarn drivers leave on the launching host: their folders STACK_DIR/yarn/<cluster>/<driver> (what was
// submitted, the Hadoop conf, an engine's log; the containers' logs stay with YARN). The retention sweep removes a
// folder once its removal marker, which the driver's end writes, is older than the cutoff; a folder without one is
// a driver still on.
import fs from 'node:fs/promises';
import path from 'node:path';
import { YARN_DRIVER_FILES } from './adapter';

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Removes the folders of yarn drivers removed before `cutoff` (epoch ms); how many went. */
export async function sweepYarnFolders(stackDir: string, cutoff: number): Promise<number> {
  const yarnDir = path.join(stackDir, 'yarn');
  let removed = 0;
  for (const cluster of await fs.readdir(yarnDir).catch(() => [] as string[])) {
    if (!SAFE_NAME.test(cluster)) continue;
    const parent = path.join(yarnDir, cluster);
    for (const name of await fs.readdir(parent).catch(() => [] as string[])) {
      if (!SAFE_NAME.test(name)) continue;
      const marker = await fs.stat(path.join(parent, name, YARN_DRIVER_FILES.removed)).catch(() => undefined);
      if (!marker || marker.mtimeMs >= cutoff) continue;
      await fs.rm(path.join(parent, name), { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
