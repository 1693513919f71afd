// How requests reach the API server: one keep-alive agent per adapter, with the kubeconfig's TLS
// material and credentials, and a timeout on every request.
import http from 'node:http';
import https from 'node:https';
import { ResponseContext, type KubeConfig, type RequestContext } from '@kubernetes/client-node';

export interface Transport {
  agent: http.Agent;
  headers: Record<string, string>;
  secure: boolean;
}

/**
 * One keep-alive agent per adapter, built from the kubeconfig once. The client library would make
 * a new agent (a new connection) per request and never time out; a status poll must not hang.
 */
export async function transportFor(kc: KubeConfig, timeoutMs: number): Promise<Transport> {
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const secure = kc.getCurrentCluster()!.server.startsWith('https:');
  const agentOpts: https.AgentOptions = {
    keepAlive: true,
    maxSockets: 100,
    timeout: timeoutMs,
    ca: opts.ca,
    cert: opts.cert,
    key: opts.key,
    rejectUnauthorized: opts.rejectUnauthorized,
    servername: opts.servername,
  };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {}))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  // A bearer token (set by the kubeconfig above) wins over basic auth.
  if (opts.auth && !headers.Authorization) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return { agent: secure ? new https.Agent(agentOpts) : new http.Agent(agentOpts), headers, secure };
}

export async function send(t: Transport, req: RequestContext, timeoutMs: number): Promise<ResponseContext> {
  try {
    return await sendOnce(t, req, timeoutMs);
  } catch (e) {
    // A kept-alive connection the server closed meanwhile fails at once; a fresh one may not. Every
    // request the adapter makes is safe to repeat (creates by fixed name, reads, deletes).
    if ((e as { reusedSocket?: boolean }).reusedSocket && (e as NodeJS.ErrnoException).code === 'ECONNRESET')
      return sendOnce(t, req, timeoutMs);
    throw e;
  }
}

function sendOnce(t: Transport, req: RequestContext, timeoutMs: number): Promise<ResponseContext> {
  return new Promise((resolve, reject) => {
    const body = req.getBody();
    if (body !== undefined && typeof body !== 'string') {
      reject(new Error('unsupported request body'));
      return;
    }
    const headers: Record<string, string | number> = { ...req.getHeaders(), ...t.headers };
    if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
    const r = (t.secure ? https : http).request(
      req.getUrl(),
      { method: req.getHttpMethod(), headers, agent: t.agent, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
          // The API server answers pods/log of a pod not on a node yet with 200, an empty body and no
          // Content-Type, which the client library refuses to parse ("No Content-Type defined"): it is text.
          h['content-type'] ??= 'text/plain';
          resolve(
            new ResponseContext(res.statusCode ?? 0, h, {
              text: async () => buf.toString('utf8'),
              binary: async () => buf,
            }),
          );
        });
      },
    );
    r.on('timeout', () =>
      r.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })),
    );
    r.on('error', (e) => reject(Object.assign(e, { reusedSocket: r.reusedSocket })));
    r.end(body);
  });
}
