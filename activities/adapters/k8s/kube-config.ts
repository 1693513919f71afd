// The kubeconfig of a cluster document: its server, CA, and credentials: a client certificate and key,
// a bearer token (service account tokens; EKS, GKE and AKS tokens), or basic auth.
import { createPrivateKey } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import type { K8sCluster } from './options';

const pemToBase64 = (s: string) =>
  s.includes('-----BEGIN') ? Buffer.from(s).toString('base64') : s.replace(/\s+/g, '');
const pemText = (s: string) => (s.includes('-----BEGIN') ? s : Buffer.from(s, 'base64').toString('utf8'));

/** The client key as base64 PEM. KubeConfig has no passphrase field: decrypt here and hand it the plain key. */
function clientKeyData(cluster: K8sCluster): string | undefined {
  if (!cluster.clientKey) return undefined;
  const key = pemText(cluster.clientKey);
  try {
    return cluster.clientKeyPassphrase
      ? Buffer.from(
          createPrivateKey({ key, format: 'pem', passphrase: cluster.clientKeyPassphrase }).export({
            format: 'pem',
            type: 'pkcs8',
          }) as string,
        ).toString('base64')
      : pemToBase64(key);
  } catch {
    throw new Error(`cluster '${cluster.name}': invalid clientKey, or clientKeyPassphrase does not decrypt it`);
  }
}

/** The kubeconfig of a cluster document: its server, CA, client certificate and key, bearer token or basic auth. */
export function buildKubeConfig(cluster: K8sCluster, namespace = 'default'): KubeConfig {
  const server = cluster.url.trim().replace(/\/+$/, '');
  const keyData = clientKeyData(cluster);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: cluster.name,
        server,
        caData: cluster.caCert ? pemToBase64(cluster.caCert) : undefined,
        // Plain http (a local fake or kubectl proxy) has no TLS to verify.
        skipTLSVerify: !cluster.caCert && server.startsWith('http:'),
      },
    ],
    users: [
      {
        name: `${cluster.name}-user`,
        certData: cluster.clientCert ? pemToBase64(cluster.clientCert) : undefined,
        keyData,
        token: cluster.token?.trim() || undefined,
        username: cluster.username || undefined,
        password: cluster.username ? (cluster.password ?? '') : undefined,
      },
    ],
    contexts: [{ name: cluster.name, cluster: cluster.name, user: `${cluster.name}-user`, namespace }],
    currentContext: cluster.name,
  });
  return kc;
}
