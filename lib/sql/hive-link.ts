// The Thrift link to HiveServer2 (hive.ts): a TCP connection with SASL PLAIN and a framed transport, its RPCs
// as promises that all fail at once when the connection goes.
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { auth, connections, HiveClient, thrift } from 'hive-driver';
import type { EngineEndpoint } from '../../domain/sql-engine';

const { TCLIService, TCLIService_types: T } = thrift;

class TransportError extends Error {}

// hive-driver's own thrift (its dependency, not ours): the framed transport is extended below.
const requireHere = createRequire(import.meta.url);
const thriftLib = requireHere(requireHere.resolve('thrift', { paths: [requireHere.resolve('hive-driver')] })) as {
  TFramedTransport: new (buf?: Buffer, onFlush?: (frame: Buffer, seqid: number | null) => void) => object;
};

/**
 * Thrift's framed transport, assembling received frames as Buffers: thrift 0.20's own receiver copies every
 * byte through a JS array, which costs large results about half their speed.
 */
class FramedTransport extends thriftLib.TFramedTransport {
  static receiver(callback: (t: object, seqid?: number) => void, seqid?: number) {
    let rest: Buffer | null = null;
    return (data: Buffer) => {
      let buf = rest ? Buffer.concat([rest, data]) : data;
      rest = null;
      while (buf.length >= 4) {
        const size = buf.readInt32BE(0);
        if (buf.length < 4 + size) break;
        callback(new thriftLib.TFramedTransport(buf.subarray(4, 4 + size)), seqid);
        buf = buf.subarray(4 + size);
      }
      if (buf.length) rest = buf;
    };
  }
}

type Callback = (err: unknown, res: unknown) => void;

/** A connection's RPCs as promises; all pending ones fail at once when the socket goes. */
export class Link {
  private readonly pending = new Set<(e: Error) => void>();
  broken?: TransportError;

  constructor(
    private readonly client: HiveClient,
    private readonly rpc: Record<string, (req: unknown, cb: Callback) => void>,
  ) {
    const events = client as EventEmitter;
    events.on('error', (e: Error) => this.fail(`HiveServer2 connection failed: ${e.message}`));
    events.on('close', () => this.fail('HiveServer2 closed the connection'));
  }

  call<R>(method: string, req: unknown): Promise<R> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise<R>((resolve, reject) => {
      this.pending.add(reject);
      this.rpc[method].call(this.rpc, req, (err, res) => {
        this.pending.delete(reject);
        if (err) this.fail(`HiveServer2 ${method} failed: ${(err as Error).message ?? String(err)}`);
        if (err) reject(this.broken);
        else resolve(res as R);
      });
    });
  }

  fail(message: string) {
    this.broken ??= new TransportError(message);
    for (const reject of this.pending) reject(this.broken);
    this.pending.clear();
  }

  close() {
    this.fail('connection closed');
    this.client.close();
  }
}

export async function openLink(e: EngineEndpoint, user: string, timeoutMs: number): Promise<Link> {
  const client = new HiveClient(TCLIService, T);
  client.on('error', () => undefined); // until the Link listens: an unheard 'error' would throw
  let socket: { destroy(): void } | undefined;
  const plain = new auth.PlainTcpAuthentication({ username: user, password: 'anonymous' });
  // HiveServer2 with authentication NONE speaks SASL PLAIN; the socket is kept to abort a slow connect.
  const authProvider = {
    authenticate(t: Parameters<typeof plain.authenticate>[0]) {
      const done = plain.authenticate(t);
      socket = (t as unknown as { getTransport(): { destroy(): void } }).getTransport();
      return done;
    },
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new TransportError(`no HiveServer2 answer at ${e.host}:${e.port} within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  const connecting = client.connect(
    { host: e.host, port: e.port, options: { transport: FramedTransport } },
    new connections.TcpConnection(),
    authProvider,
  );
  try {
    await Promise.race([connecting, timeout]);
  } catch (err) {
    socket?.destroy();
    connecting.catch(() => undefined);
    throw err instanceof TransportError
      ? err
      : new TransportError(`cannot connect to HiveServer2 at ${e.host}:${e.port}: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  return new Link(client, client.getClient() as unknown as Record<string, (req: unknown, cb: Callback) => void>);
}
