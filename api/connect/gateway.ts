// The Spark Connect gateway: one TLS port (CONNECT_PORT) that pyspark and Scala Connect clients reach with
// `sc://host:port/;token=<API key or OIDC token>[;cluster=<name>]`. Each call is checked (Host and Origin as
// on every port, the token as on REST with the operator role), its session found or started by the session_id
// of its first message (sessions.ts), and the call forwarded over HTTP/2 without TLS to the session's server on
// loopback, its request headers written anew with the server's secret added and the credentials taken out.
// Each client connection is relayed frame by frame (relay.ts): nothing of a plan or a result is decoded, and the
// server's answers pass as the bytes they came as (bench/connect.ts measures it against a bare TLS pipe).
//   missing or wrong token → UNAUTHENTICATED (16); a role below operator, another principal's session, a Host
//   or Origin refused → PERMISSION_DENIED (7); over a limit or quota → RESOURCE_EXHAUSTED (8); an ended
//   session (its server died, idle) → FAILED_PRECONDITION (9) saying why.
// The session bookkeeping is sessions.ts, the connection's frames relay.ts, gRPC statuses grpc.ts.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import { tcpAccepts } from '../../lib/tcp';
import { CONNECT_SECRET_HEADER } from '../../lib/driver-secret';
import { AuthFailure, authenticatorOf, authorize, type Principal } from '../auth/authenticate';
import { Role } from '../auth/roles';
import { checkAuthSetup } from '../auth/startup';
import type { ApiDeps } from '../deps';
import { hostOriginPolicy, hostProblem, originProblem } from '../security/host-origin';
import { GrpcError, GrpcStatus } from './grpc';
import { Relay, type CallRoute } from './relay';
import { SessionTable, type LiveSession, type SessionTableOptions } from './sessions';

/** The sc:// URL parameter (sent as gRPC metadata) naming the cluster of a new session. */
export const CLUSTER_PARAM = 'cluster';
const DEFAULT_CLUSTER = 'default';
const SERVICE_PREFIX = '/spark.connect.SparkConnectService/';
/** How long an authenticated token is trusted without asking again (a revoked key stops working within this). */
const AUTH_CACHE_MS = 5_000;

/**
 * The JVM Connect client (spark-connect-client-jvm) sends its token as `Authentication: Bearer <token>`, where
 * pyspark sends `Authorization`; both are read, and neither is forwarded.
 */
const AUTHENTICATION = 'authentication';

/** Request headers the gateway never forwards: its own credentials, routing, and what HTTP/2 sets per hop. */
const NOT_FORWARDED = new Set([
  'authorization',
  AUTHENTICATION,
  'x-api-key',
  CLUSTER_PARAM,
  CONNECT_SECRET_HEADER,
  ':authority',
  ':scheme',
  'host',
  'connection',
  'origin',
]);

export interface ConnectGatewayOptions extends SessionTableOptions {
  /** Default CONNECT_PORT; 0 picks a free port. */
  port?: number;
  /** Default CONNECT_HOST. */
  host?: string;
  /** PEM; default the files at CONNECT_TLS_CERT and CONNECT_TLS_KEY. */
  cert?: string | Buffer;
  key?: string | Buffer;
}

export interface RunningGateway {
  server: tls.Server;
  port: number;
  /** e.g. sc://127.0.0.1:15002 */
  url: string;
  sessions: SessionTable;
  close(): Promise<void>;
}

export async function startConnectGateway(deps: ApiDeps, opts: ConnectGatewayOptions = {}): Promise<RunningGateway> {
  const { config } = deps;
  const host = opts.host ?? config.CONNECT_HOST;
  // As on every port: a public address needs authentication (AUTH_MODE=on).
  await checkAuthSetup(config, deps.store, host);
  const cert = opts.cert ?? readFileSync(config.CONNECT_TLS_CERT);
  const key = opts.key ?? readFileSync(config.CONNECT_TLS_KEY);
  const policy = hostOriginPolicy(config, host);
  const auth = authenticatorOf(deps);
  const sessions = new SessionTable(deps, opts);
  const trusted = new Map<string, { who: Principal; until: number }>();

  const identify = async (authorization: string | undefined): Promise<Principal> => {
    if (!auth.enabled) return auth.identify({});
    const k = authorization ? createHash('sha256').update(authorization).digest('base64') : '';
    const hit = k && trusted.get(k);
    if (hit && hit.until > Date.now()) return hit.who;
    const who = await auth.identify({ authorization });
    if (k) {
      if (trusted.size > 10_000) trusted.clear();
      trusted.set(k, { who, until: Date.now() + AUTH_CACHE_MS });
    }
    return who;
  };

  /**
   * A forwarded call's server connection broke. A server that still accepts connections only lost this connection:
   * the client may retry (UNAVAILABLE, which pyspark retries and reattaches). One that does not is gone, and so
   * are the sessions on it: they end, and the call fails for good saying so.
   */
  const callFailed = async (s: LiveSession, cause: string): Promise<GrpcError> => {
    if (await tcpAccepts(s.endpoint, 1_000))
      return new GrpcError(GrpcStatus.UNAVAILABLE, `the call to the Spark Connect server failed (${cause}); try again`);
    const reason = `its Spark Connect server (cluster '${s.record.clusterName}', ${s.record.driverId}) stopped or died (${cause})`;
    await sessions.endOnDriver(s.record.driverId, reason);
    return new GrpcError(
      GrpcStatus.FAILED_PRECONDITION,
      `Spark Connect session ${s.record.id} has ended: ${reason}; start a new session`,
    );
  };

  /** Each new call of a connection: checked, its session found or started, and where it goes. */
  const admit =
    (socket: TLSSocket) =>
    async (
      headers: Record<string, string>,
      list: [string, string][],
      sessionId: Promise<string>,
    ): Promise<CallRoute> => {
      // Host and Origin, as on every port (gRPC clients send no Origin; a browser's page would).
      const asHttp = {
        headers: {
          host: headers[':authority'] ?? headers.host,
          origin: headers.origin,
          'sec-fetch-site': headers['sec-fetch-site'],
        },
        socket,
      } as unknown as IncomingMessage;
      const refused = hostProblem(asHttp, policy) ?? originProblem(asHttp, policy);
      if (refused) throw new GrpcError(GrpcStatus.PERMISSION_DENIED, refused);
      const path = headers[':path'] ?? '';
      if (headers[':method'] !== 'POST' || !path.startsWith(SERVICE_PREFIX))
        throw new GrpcError(GrpcStatus.UNIMPLEMENTED, `the Spark Connect gateway serves ${SERVICE_PREFIX}* only`);
      let who: Principal;
      try {
        who = await identify(headers.authorization ?? headers[AUTHENTICATION]);
        authorize(who, Role.operator, 'use Spark Connect');
      } catch (e) {
        if (!(e instanceof AuthFailure)) throw e;
        const code =
          e.status === 401
            ? GrpcStatus.UNAUTHENTICATED
            : e.status === 403
              ? GrpcStatus.PERMISSION_DENIED
              : GrpcStatus.UNAVAILABLE;
        throw new GrpcError(code, e.message);
      }
      const clusterName = headers[CLUSTER_PARAM] || DEFAULT_CLUSTER;
      const s = await sessions.route(await sessionId, who, clusterName, socket);
      sessions.callStarted(s);
      const { host, port } = s.endpoint;
      const out: [string, string][] = [
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', path],
        [':authority', `${host.includes(':') ? `[${host}]` : host}:${port}`],
      ];
      for (const [k, v] of list) if (!k.startsWith(':') && !NOT_FORWARDED.has(k)) out.push([k, v]);
      out.push([CONNECT_SECRET_HEADER, s.secret]);
      let ended = false;
      return {
        endpoint: s.endpoint,
        headers: out,
        ended: () => {
          if (!ended) sessions.callEnded(s);
          ended = true;
        },
        failed: (cause) => callFailed(s, cause),
      };
    };

  // ALPN h2 only: gRPC clients insist on it, and nothing else is spoken here.
  const server = tls.createServer({ cert, key, ALPNProtocols: ['h2'] });
  const open = new Set<TLSSocket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    new Relay(socket, { admit: admit(socket) });
  });
  server.on('tlsClientError', () => undefined);
  server.listen(opts.port ?? config.CONNECT_PORT, host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([e]) => Promise.reject(e))]);
  const port = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const close = async () => {
    const closed = once(server, 'close');
    server.close();
    for (const socket of open) socket.destroy();
    await sessions.close();
    await closed;
  };
  return { server, port, url: `sc://${shown}:${port}`, sessions, close };
}
