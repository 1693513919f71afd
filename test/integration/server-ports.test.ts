// A test server whose port was taken before it could listen (scripts/mongo/Launcher.java, lib/ports.ts): the real
// mongo-java-server says so and exits at once, instead of running on with nothing to serve while its caller waits
// a minute for a readiness line (a bench's stack start, 2026-11-29), and the caller can tell that from other
// failures and start again on other ports (testkit/servers.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../lib/config';
import { freePort, portTaken } from '../../lib/ports';
import { MONGO_READY, serverCommands, waitForOutput } from '../../scripts/services';

const dir = mkdtempSync(path.join(os.tmpdir(), 'server-ports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a port taken before the server listens', () => {
  it('makes mongo-java-server say so and exit at once', async () => {
    const port = await freePort();
    const intruder = net.createServer();
    await new Promise<void>((r) => intruder.listen(port, '127.0.0.1', r));
    try {
      const { mongo } = serverCommands({
        stackDir: process.env.STACK_DIR ?? path.join(ROOT, '.stack'),
        dataDir: path.join(dir, 'data'),
        logDir: path.join(dir, 'logs'),
        temporalPort: 0,
        temporalUiPort: 0,
        mongoPort: port,
        persistent: false,
      });
      const proc = spawn(mongo.cmd, mongo.args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const t0 = Date.now();
      const err = await waitForOutput(proc, MONGO_READY(port), 60_000, 'mongo-java-server').then(
        () => new Error('it said it listens'),
        (e: Error) => e,
      );
      proc.kill('SIGKILL');
      expect(err.message).toMatch(
        new RegExp(
          `mongo-java-server exited \\(3\\) before it was ready; [^]*cannot listen on 127\\.0\\.0\\.1:${port}: java\\.net\\.BindException`,
        ),
      );
      expect(portTaken(err)).toBe(true);
      // The JVM's start and the source launcher's compile take a few seconds; the readiness wait was 60.
      expect(Date.now() - t0).toBeLessThan(30_000);
    } finally {
      intruder.close();
    }
  }, 60_000);
});
