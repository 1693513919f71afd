// When a test's servers are ready (scripts/services.ts). A listening port is not enough: restarted on the
// same port, a server can lose it to another process while its JVM starts, and a check that only connects
// takes the intruder for the server (CI, 2026-11-27: "Server selection timed out after 10000 ms" right after
// a restart said mongo-java-server was up). The server's own "listening" line is what counts.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { MONGO_READY, waitForOutput } from '../../scripts/services';
import { connectStore } from '../../lib/mongo';

const sh = (script: string) => spawn('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });

describe('server readiness', () => {
  it('waits for the line that says the server listens on its port, across chunks', async () => {
    const p = sh(
      'printf "starting\\nmongo-java-server listen"; sleep 0.3; printf "ing on 127.0.0.1:4242 (in memory)\\n"; sleep 5',
    );
    const t0 = Date.now();
    await waitForOutput(p, MONGO_READY(4242), 5_000, 'mongo-java-server');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    p.kill();
  });

  it('does not take the line for another port as ready', async () => {
    const p = sh('echo "mongo-java-server listening on 127.0.0.1:42420"; sleep 5');
    await expect(waitForOutput(p, MONGO_READY(4242), 800, 'mongo-java-server')).rejects.toThrow(
      /mongo-java-server was not ready within 800 ms; its last output:\nmongo-java-server listening on 127.0.0.1:42420/,
    );
    p.kill();
  });

  it('fails at once, with what the server said, when it exits before it is ready', async () => {
    const p = sh('echo "java.net.BindException: Address already in use" >&2; exit 1');
    const t0 = Date.now();
    await expect(waitForOutput(p, MONGO_READY(4242), 30_000, 'mongo-java-server')).rejects.toThrow(
      /mongo-java-server exited \(1\) before it was ready; its last output:\njava.net.BindException: Address already in use/,
    );
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('says what the MongoDB servers answered when none can be selected, and never the URL', async () => {
    // Two listeners that are not MongoDB: one closes every connection, one accepts and never answers.
    const closing = net.createServer((s) => s.destroy());
    const silent = net.createServer(() => undefined);
    const ports: number[] = [];
    for (const server of [closing, silent]) {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      ports.push((server.address() as net.AddressInfo).port);
    }
    const failure = (port: number) =>
      connectStore({
        MONGO_URL: `mongodb://admin:s3cret-pass@127.0.0.1:${port}/?directConnection=true`,
        MONGO_DB: 'x',
      }).then(
        () => new Error('connected'),
        (e: Error) => e,
      );
    try {
      const [closed, unanswered] = await Promise.all(ports.map(failure));
      expect(closed.message).toMatch(new RegExp(`\\(127\\.0\\.0\\.1:${ports[0]}: connection .*closed\\)$`));
      expect(unanswered.message).toBe(
        `Server selection timed out after 10000 ms (127.0.0.1:${ports[1]}: no answer (Unknown))`,
      );
      for (const e of [closed, unanswered]) expect(e.message).not.toContain('s3cret-pass');
    } finally {
      for (const server of [closing, silent]) server.close();
    }
  }, 20_000);
});
