// The real pyspark Spark Connect client (testkit/connect_client.py) as a subprocess of the venv's Python, driven
// one JSON command a line: for test/e2e/spark-connect.test.ts and bench/connect.ts. Its stderr (pyspark's and
// grpc's logs) goes to a file, shown only by a failing test.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

export type ClientAnswer =
  { ok: true; result: unknown } | { ok: false; error: string; message: string; code: string | null };

export interface ConnectClientOptions {
  python: string;
  /** The gateway's certificate, trusted by grpc (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH). */
  caFile?: string;
  /** Where the client's stderr and the protocol's lines go. */
  logFile: string;
}

const SCRIPT = path.join(path.dirname(new URL(import.meta.url).pathname), 'connect_client.py');

export class ConnectClient {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly waiting: ((a: ClientAnswer) => void)[] = [];
  private readonly log: NodeJS.WritableStream;
  private exited: string | undefined;

  constructor(o: ConnectClientOptions) {
    mkdirSync(path.dirname(o.logFile), { recursive: true });
    this.log = createWriteStream(o.logFile, { flags: 'a' });
    this.proc = spawn(o.python, ['-u', SCRIPT], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        ...(o.caFile ? { GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: o.caFile } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stderr.pipe(this.log, { end: false });
    createInterface({ input: this.proc.stdout }).on('line', (line) => {
      this.log.write(`< ${line}\n`);
      this.waiting.shift()?.(JSON.parse(line) as ClientAnswer);
    });
    this.proc.on('exit', (code, signal) => {
      this.exited = `the client exited (${code ?? signal})`;
      for (const w of this.waiting.splice(0)) w({ ok: false, error: 'Exited', message: this.exited, code: null });
    });
  }

  private send(cmd: Record<string, unknown>): Promise<ClientAnswer> {
    if (this.exited) return Promise.resolve({ ok: false, error: 'Exited', message: this.exited, code: null });
    this.log.write(`> ${JSON.stringify(cmd)}\n`);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.proc.stdin.write(`${JSON.stringify(cmd)}\n`);
    });
  }

  connect(url: string): Promise<ClientAnswer> {
    return this.send({ op: 'connect', url });
  }

  /** Python code with `spark` in scope; what it assigns to `result` comes back. */
  run(code: string): Promise<ClientAnswer> {
    return this.send({ op: 'run', code });
  }

  /** run(), throwing on an error answer; the result. */
  async value<T = unknown>(code: string): Promise<T> {
    const a = await this.run(code);
    if (!a.ok) throw new Error(`${a.error} (${a.code}): ${a.message}`);
    return a.result as T;
  }

  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    await this.send({ op: 'stop' }).catch(() => undefined);
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
