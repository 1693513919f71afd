// The Spark Connect gateway: one TLS port (CONNECT_PORT) that pyspark and Scala Connect clients reach with
// `sc://host:port/;token=<API key or OIDC token>[;cluster=<name>]`. Each call is checked (Host and Origin as
// on every port, the token as on REST with the operator role), its session found or started by the session_id
// of its first message (sessions.ts), and the call forwarded as is, over HTTP/2 without TLS, to the session's
// server on loopback with the server's secret added. Nothing of a plan is decoded: the proxy adds well under
// a millisecond (bench/connect.ts).
//   missing or wrong token → UNAUTHENTICATED (16); a role below operator, another principal's session, a Host
//   or Origin refused → PERMISSION_DENIED (7); over a limit or quota → RESOURCE_EXHAUSTED (8); an ended
//   session (its server died, idle) → FAILED_PRECONDITION (9) saying why.
// Over 300 lines on purpose: one HTTP/2 server's call path read top to bottom (checks, routing, forwarding);
// the session bookkeeping is sessions.ts, gRPC framing and statuses grpc.ts.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http2, {
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import type { IncomingMessage } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tcpAccepts } from '../../lib/tcp';
import { CONNECT_SECRET_HEADER } from '../../lib/driver-secret';
import { logger } from '../../lib/log';
import { AuthFailure, authenticatorOf, authorize, type Principal } from '../auth/authenticate';
import { Role } from '../auth/roles';
import { checkAuthSetup } from '../auth/startup';
import type { ApiDeps } from '../deps';
import { hostOriginPolicy, hostProblem, originProblem } from '../security/host-origin';
import { GrpcError, grpcMessage, GrpcStatus, readSessionId, replyStatus } from './grpc';
import { SessionTable, type LiveSession, type SessionTableOptions } from './sessions';

const log = logger('connect');

/** The sc:// URL parameter (sent as gRPC metadata) naming the cluster of a new session. */
export const CLUSTER_PARAM = 'cluster';
const DEFAULT_CLUSTER = 'default';
const SERVICE_PREFIX = '/spark.connect.SparkConnectService/';
/** How long an authenticated token is trusted without asking again (a revoked key stops working within this). */
const AUTH_CACHE_MS = 5_000;
/** Flow-control windows: large collects stream Arrow batches of up to 4 MiB. */
const WINDOW = 16 * 2 ** 20;
const H2_SETTINGS = { initialWindowSize: WINDOW, maxFrameSize: 2 ** 20 };

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
  server: http2.Http2SecureServer;
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
  const upstreams = new Map<string, ClientHttp2Session>();
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

  const upstreamOf = (s: LiveSession): ClientHttp2Session => {
    const at = `${s.endpoint.host}:${s.endpoint.port}`;
    let u = upstreams.get(at);
    if (!u || u.closed || u.destroyed) {
      const { host, port } = s.endpoint;
      // No Nagle: a small response frame held for the server's delayed ACK costs ~40 ms.
      u = http2.connect(`http://${at}`, {
        settings: H2_SETTINGS,
        createConnection: () => net.connect({ host, port, noDelay: true }),
      });
      u.on('connect', () => u!.setLocalWindowSize(WINDOW));
      u.on('error', () => undefined);
      u.on('close', () => upstreams.get(at) === u && upstreams.delete(at));
      u.unref();
      upstreams.set(at, u);
    }
    return u;
  };

  /**
   * A forwarded call failed. A server that still accepts connections only lost this call (a reset stream): the
   * client may retry (UNAVAILABLE, which pyspark retries and reattaches). One that does not is gone, and so are
   * the sessions on it: they end, and the call fails for good saying so.
   */
  const callFailed = async (s: LiveSession, cause: string): Promise<GrpcError> => {
    if (await tcpAccepts(s.endpoint, 1_000))
      return new GrpcError(GrpcStatus.UNAVAILABLE, `the call to the Spark Connect server failed (${cause}); try again`);
    const reason = `its Spark Connect server (cluster '${s.record.clusterName}', ${s.record.driverId}) stopped or died (${cause})`;
    await sessions.endOnDriver(s.record.driverId, reason);
    const u = upstreams.get(`${s.endpoint.host}:${s.endpoint.port}`);
    u?.destroy();
    return new GrpcError(
      GrpcStatus.FAILED_PRECONDITION,
      `Spark Connect session ${s.record.id} has ended: ${reason}; start a new session`,
    );
  };

  /** Reads the request's first bytes up to its session id; the stream is paused after, its bytes returned. */
  const firstBytes = (stream: ServerHttp2Stream) =>
    new Promise<{ chunks: Buffer[]; sessionId: string; ended: boolean }>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const done = (f: () => void) => {
        stream.off('data', onData);
        stream.off('end', onEnd);
        stream.off('close', onClose);
        stream.pause();
        f();
      };
      const check = (ended: boolean) => {
        const r = readSessionId(Buffer.concat(chunks));
        if ('sessionId' in r) done(() => resolve({ chunks, sessionId: r.sessionId, ended }));
        else if ('error' in r) done(() => reject(new GrpcError(GrpcStatus.INVALID_ARGUMENT, r.error)));
        else if (ended) done(() => reject(new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'the request has no session_id')));
      };
      const onData = (c: Buffer) => {
        chunks.push(c);
        check(false);
      };
      const onEnd = () => check(true);
      const onClose = () => done(() => reject(new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'the call was cancelled')));
      stream.on('data', onData);
      stream.once('end', onEnd);
      stream.once('close', onClose);
      // A request without a body ended with its headers, and its 'end' may be past already.
      if (stream.readableEnded) check(true);
    });

  const handle = async (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): Promise<void> => {
    // Host and Origin, as on every port (gRPC clients send no Origin; a browser's page would).
    const asHttp = {
      headers: {
        host: headers[':authority'] ?? headers.host,
        origin: headers.origin,
        'sec-fetch-site': headers['sec-fetch-site'],
      },
      socket: stream.session?.socket,
    } as unknown as IncomingMessage;
    const refused = hostProblem(asHttp, policy) ?? originProblem(asHttp, policy);
    if (refused) throw new GrpcError(GrpcStatus.PERMISSION_DENIED, refused);
    const path = String(headers[':path'] ?? '');
    if (headers[':method'] !== 'POST' || !path.startsWith(SERVICE_PREFIX))
      throw new GrpcError(GrpcStatus.UNIMPLEMENTED, `the Spark Connect gateway serves ${SERVICE_PREFIX}* only`);
    let who: Principal;
    try {
      const given = headers.authorization ?? headers[AUTHENTICATION];
      who = await identify(Array.isArray(given) ? given[0] : given);
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
    const clusterName = String(headers[CLUSTER_PARAM] ?? DEFAULT_CLUSTER) || DEFAULT_CLUSTER;
    const first = await firstBytes(stream);
    const s = await sessions.route(first.sessionId, who, clusterName, stream.session as http2.Http2Session);
    sessions.callStarted(s);
    try {
      await forward(stream, headers, s, first);
    } finally {
      sessions.callEnded(s);
    }
  };

  const forward = (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    s: LiveSession,
    first: { chunks: Buffer[]; ended: boolean },
  ) =>
    new Promise<void>((resolve) => {
      const out: OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(headers)) if (!NOT_FORWARDED.has(k) && v !== undefined) out[k] = v;
      out[CONNECT_SECRET_HEADER] = s.secret;
      const u = upstreamOf(s);
      const up = u.request(out, { endStream: false });
      let trailers: OutgoingHttpHeaders | undefined;
      let responded = false;
      let finished = false;
      const finish = () => {
        if (!finished) {
          finished = true;
          resolve();
        }
      };
      up.on('response', (h) => {
        responded = true;
        const resHeaders: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(h)) if (v !== undefined) resHeaders[k] = v;
        if (up.endAfterHeaders || h['grpc-status'] !== undefined) {
          // Trailers-only (an error status, with grpc-status-details-bin for the client's exception): answered at once.
          if (!stream.destroyed) stream.respond(resHeaders, { endStream: true });
          finish();
          return;
        }
        if (!stream.destroyed) stream.respond(resHeaders, { waitForTrailers: true });
        up.pipe(stream);
      });
      up.on('trailers', (t) => {
        trailers = {};
        for (const [k, v] of Object.entries(t)) if (v !== undefined && v !== null) trailers[k] = v as string | string[];
      });
      stream.on('wantTrailers', () => {
        stream.sendTrailers(trailers ?? { 'grpc-status': String(GrpcStatus.INTERNAL), 'grpc-message': 'no status' });
        finish();
      });
      up.on('error', (err: NodeJS.ErrnoException) => {
        const cause = err.code ?? err.message;
        void callFailed(s, cause).then((e) => {
          if (!responded) replyStatus(stream, e.code, e.message);
          else if (!stream.destroyed) {
            trailers = { 'grpc-status': String(e.code), 'grpc-message': grpcMessage(e.message) };
            stream.end();
          }
          finish();
        });
      });
      up.on('close', () => {
        // Reset by the server without an answer (RST_STREAM, GOAWAY): the server went away mid-call.
        if (!responded && !finished && up.rstCode !== http2.constants.NGHTTP2_NO_ERROR && !stream.destroyed) {
          void callFailed(s, `stream reset ${up.rstCode}`).then((e) => {
            replyStatus(stream, e.code, e.message);
            finish();
          });
        } else if (!finished && stream.destroyed) finish();
      });
      stream.on('close', () => {
        // The client cancelled: so is the server's call.
        if (!up.closed) up.close(http2.constants.NGHTTP2_CANCEL);
        finish();
      });
      for (const c of first.chunks) up.write(c);
      if (first.ended) up.end();
      else {
        stream.pipe(up);
        stream.resume();
      }
    });

  const server = http2.createSecureServer({ cert, key, allowHTTP1: false, settings: H2_SETTINGS });
  server.on('secureConnection', (socket: TLSSocket) => socket.setNoDelay(true));
  server.on('session', (session) => {
    session.setLocalWindowSize?.(WINDOW);
    session.on('error', () => undefined);
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    handle(stream, headers).catch((e: unknown) => {
      if (e instanceof GrpcError) return replyStatus(stream, e.code, e.message);
      log.warn('connect call failed', { err: String(e) });
      replyStatus(stream, GrpcStatus.UNAVAILABLE, 'the gateway cannot reach its stores right now; try again');
    });
  });
  server.on('sessionError', () => undefined);
  server.listen(opts.port ?? config.CONNECT_PORT, host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([e]) => Promise.reject(e))]);
  const port = (server.address() as AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const open = new Set<http2.ServerHttp2Session>();
  server.on('session', (sess) => {
    open.add(sess);
    sess.once('close', () => open.delete(sess));
  });
  const close = async () => {
    const closed = once(server, 'close');
    server.close();
    for (const sess of open) sess.destroy();
    for (const u of upstreams.values()) u.destroy();
    await sessions.close();
    await closed;
  };
  return { server, port, url: `sc://${shown}:${port}`, sessions, close };
}
