// Free ports for servers started in other processes (lib/ports.ts): drawn below the kernel's ephemeral range,
// where no outgoing connection's local port can take one before its server listens, and checked free.
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ephemeralLow, FLOOR, freePort, portTaken } from '../../lib/ports';

const low = ephemeralLow();
/** Math.random's value that draws `port`. */
const drawing = (port: number) => (port - FLOOR + 0.5) / (low! - FLOOR);

async function listener(): Promise<[net.Server, number]> {
  const s = net.createServer();
  for (;;) {
    const port = FLOOR + Math.floor(Math.random() * (low! - FLOOR));
    const ok = await new Promise<boolean>((resolve) => {
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) return [s, port];
  }
}

const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

describe.skipIf(!low || low - FLOOR < 1000)('free ports', () => {
  afterEach(() => vi.restoreAllMocks());

  it('are drawn below the ephemeral range, and are free', async () => {
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(FLOOR);
      expect(p).toBeLessThan(low!);
      expect(p).not.toBe(27017);
    }
    expect(new Set(ports).size).toBeGreaterThan(30);
    expect(await listens(ports[0])).toBe(true);
  });

  it('skip a port something listens on', async () => {
    const [held, port] = await listener();
    try {
      const other = port === 20_123 ? 20_124 : 20_123;
      const otherFree = await listens(other);
      vi.spyOn(Math, 'random').mockReturnValueOnce(drawing(port)).mockReturnValueOnce(drawing(other));
      const got = await freePort();
      expect(got).not.toBe(port);
      if (otherFree) expect(got).toBe(other);
    } finally {
      held.close();
    }
  });

  it("fall back to the kernel's choice when every draw is taken", async () => {
    const [held, port] = await listener();
    try {
      vi.spyOn(Math, 'random').mockReturnValue(drawing(port));
      const got = await freePort();
      expect(got).toBeGreaterThanOrEqual(low!);
    } finally {
      held.close();
    }
  });
});

describe('a port taken before its server listened', () => {
  it("is told by mongo-java-server's and Go's wording, and nothing else", () => {
    expect(
      portTaken(
        new Error(
          'mongo-java-server exited (3) before it was ready; its last output:\nmongo-java-server cannot listen on 127.0.0.1:20999: java.net.BindException: Address already in use',
        ),
      ),
    ).toBe(true);
    expect(portTaken(new Error('listen tcp 127.0.0.1:7233: bind: address already in use'))).toBe(true);
    expect(portTaken(new Error('mongo-java-server was not ready within 60000 ms'))).toBe(false);
    expect(portTaken('connection refused')).toBe(false);
  });
});
