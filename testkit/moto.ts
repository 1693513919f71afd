// An S3-compatible server for tests: moto's server mode (PyPI `moto[server]`, in the tools venv that
// scripts/setup.sh makes), on a free loopback port, stopped with the test. Any access key works.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sleep } from './wait';

const ROOT = path.resolve(import.meta.dirname, '..');
export const MOTO_SERVER = path.join(process.env.STACK_DIR ?? path.join(ROOT, '.stack'), 'tools-venv/bin/moto_server');

export interface MotoServer {
  /** http://127.0.0.1:port, the endpoint of a cluster storage. */
  endpoint: string;
  stop(): Promise<void>;
}

export const motoAvailable = () => existsSync(MOTO_SERVER);

async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Resolves once the server answers HTTP; throws when it exits first or takes longer than timeoutMs. */
export async function startMoto(timeoutMs = 30_000): Promise<MotoServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(MOTO_SERVER, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}): ${stderr}`);
    const up = await fetch(`${endpoint}/`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not answer within ${timeoutMs} ms: ${stderr}`);
    }
    await sleep(100);
  }
  return {
    endpoint,
    async stop() {
      if (child.exitCode !== null) return;
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await Promise.race([gone, sleep(3000).then(() => child.kill('SIGKILL'))]);
    },
  };
}
