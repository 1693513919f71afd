// What the broken-cluster tests share: a port nothing listens on, an S3 server for the k8s adapter's
// artifacts (moto), and k8s clusters registered through the API with that storage.
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import net from 'node:net';
import { startMoto, type MotoServer } from '../../testkit/moto';
import { call, type Harness } from '../harness';

const BUCKET = 'spark';
const KEYS = { accessKey: 'broken-access', secretKey: 'broken-secret' };

/** A loopback port that was free a moment ago: nothing listens there until a test starts something. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** moto with the bucket the clusters' storage names. */
export async function startStorage(): Promise<MotoServer> {
  const moto = await startMoto();
  const s3 = new S3Client({
    endpoint: moto.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: KEYS.accessKey, secretAccessKey: KEYS.secretKey },
  });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  s3.destroy();
  return moto;
}

/** Registers a k8s cluster at `url` whose Spark storage is `storage`. */
export const createK8sCluster = (
  h: Harness,
  name: string,
  url: string,
  storage: MotoServer,
  /** How the cluster authenticates (a real API server: `{ token, caCert }`). */
  credentials: Record<string, string> = { username: 'admin', password: 'k8s-password' },
) =>
  call(h, 'POST', '/cluster', {
    name,
    type: 'k8s',
    url,
    ...credentials,
    // Where runners in pods would reach Temporal; no runner here gets that far.
    temporalAddress: 'temporal.example:7233',
    sparkStorage: 'main',
    storages: { main: { sparkBucket: BUCKET, endpoint: storage.endpoint, region: 'us-east-1', ...KEYS } },
  });
