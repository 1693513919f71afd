// The gateway's reading of a Spark Connect request's session_id from the first bytes of its gRPC frame, and the
// percent-encoding of grpc-message (api/connect/grpc.ts); the manifests of a Connect server on a k8s cluster
// (activities/adapters/k8s/connect-server.ts): pure functions, no servers.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  CONNECT_POD_PORT,
  CONNECT_SERVER_CLASS,
  SECRET_SHA256_ENV,
  withConnectEndpoint,
} from '../../activities/adapters/k8s/connect-server';
import { buildDriverManifests } from '../../activities/adapters/k8s/manifests';
import { validateManifests } from '../../activities/adapters/k8s/validate';
import { grpcMessage, readSessionId } from '../../api/connect/grpc';
import { connectServerDriverId } from '../../domain/connect';
import type { DriverSpec } from '../../domain/driver';
import { clusterServiceSpec } from '../../domain/spark-defaults';
import { connectServerSecret } from '../../lib/driver-secret';

/** A gRPC frame (uncompressed) of a message whose field 1 is `sessionId`, then `rest` (other fields' bytes). */
function frame(sessionId: string, rest = Buffer.from([0x12, 0x02, 0x0a, 0x00])): Buffer {
  const id = Buffer.from(sessionId, 'utf8');
  const msg = Buffer.concat([Buffer.from([0x0a, id.length]), id, rest]);
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(msg.length, 1);
  return Buffer.concat([prefix, msg]);
}

describe('readSessionId', () => {
  const uuid = '6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f';

  it('reads field 1 of the first message, whole or as its bytes arrive', () => {
    const f = frame(uuid);
    expect(readSessionId(f)).toEqual({ sessionId: uuid });
    for (const cut of [0, 3, 5, 6, 7, 20, 7 + uuid.length - 1])
      expect(readSessionId(f.subarray(0, cut))).toEqual({ need: true });
    expect(readSessionId(f.subarray(0, 7 + uuid.length))).toEqual({ sessionId: uuid });
  });

  it('reads a two-byte varint length', () => {
    const long = 'x'.repeat(200);
    const id = Buffer.from(long);
    const msg = Buffer.concat([Buffer.from([0x0a, 0xc8, 0x01]), id]);
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(msg.length, 1);
    expect(readSessionId(Buffer.concat([prefix, msg]))).toEqual({ sessionId: long });
  });

  it('refuses what is no Spark Connect request: compressed, no field 1 first, empty, too long, unprintable', () => {
    const compressed = frame(uuid);
    compressed[0] = 1;
    expect(readSessionId(compressed)).toMatchObject({ error: expect.stringMatching(/compressed/) });
    const otherField = frame(uuid);
    otherField[5] = 0x12;
    expect(readSessionId(otherField)).toMatchObject({ error: expect.stringMatching(/no session_id/) });
    expect(readSessionId(Buffer.from([0, 0, 0, 0, 0]))).toMatchObject({
      error: expect.stringMatching(/no session_id/),
    });
    expect(readSessionId(frame(''))).toMatchObject({ error: expect.stringMatching(/empty or too long/) });
    expect(readSessionId(frame('a b'))).toMatchObject({ error: expect.stringMatching(/printable/) });
    // A length beyond the frame's own.
    const lying = frame(uuid, Buffer.alloc(0));
    lying.writeUInt32BE(10, 1);
    expect(readSessionId(lying)).toMatchObject({ error: expect.stringMatching(/malformed/) });
  });
});

describe('grpcMessage', () => {
  it("percent-encodes '%' and everything outside printable ASCII, as gRPC over HTTP/2 asks", () => {
    expect(grpcMessage('plain text: ok')).toBe('plain text: ok');
    expect(grpcMessage('100% sure')).toBe('100%25 sure');
    expect(grpcMessage('line\nbreak é')).toBe('line%0Abreak %C3%A9');
  });
});

describe('a Connect server on a k8s cluster', () => {
  const SECRET_KEY = 'ab'.repeat(32);
  const config = {
    K8S_SPARK_IMAGE: 'registry.example.com/spark-orchestrator-driver:1',
    K8S_NAMESPACE: 'jobs',
    ARTIFACT_DIR: '/srv/artifacts',
    SECRET_KEY,
  };
  const cluster = { name: 'prod', url: 'https://k8s:6443', defaultApplicationConfig: 'spark.sql.shuffle.partitions=8' };
  const spec: DriverSpec = {
    driverId: connectServerDriverId('c1', 1, 1_700_000_000_000),
    role: 'connect-server',
    env: {},
    labels: {},
    spark: clusterServiceSpec('spark-connect', cluster),
  };

  it("is a driver pod running SparkConnectServer from the image's jars, given only its secret's hash", async () => {
    const m = buildDriverManifests(spec, { cluster, config });
    await validateManifests(m);
    const c = m.pod.spec!.containers[0];
    const args = c.args!;
    expect(args.slice(args.indexOf('--class'), args.indexOf('--class') + 2)).toEqual(['--class', CONNECT_SERVER_CLASS]);
    expect(args.at(-1)).toBe('spark-internal');
    expect(args).toContain(`spark.connect.grpc.binding.port=${CONNECT_POD_PORT}`);
    expect(args).toContain('spark.sql.shuffle.partitions=8');
    expect(args[args.indexOf('--jars') + 1]).toMatch(
      /^local:\/\/\/opt\/spark-orchestrator\/connect\/spark-connect_2.12-3.5.7.jar,/,
    );
    const secret = connectServerSecret(SECRET_KEY, spec.driverId);
    expect(c.env).toContainEqual({
      name: SECRET_SHA256_ENV,
      value: createHash('sha256').update(secret).digest('hex'),
    });
    expect(JSON.stringify(m)).not.toContain(secret);
    // Its port is on no Service: the gateway reaches the pod's IP.
    expect(m.engineService).toBeUndefined();
    expect(JSON.stringify(m.service)).not.toContain(String(CONNECT_POD_PORT));
    const pod = { ...m.pod, status: { podIP: '10.1.2.3' } };
    expect(withConnectEndpoint({ phase: 'RUNNING' }, pod)).toEqual({
      phase: 'RUNNING',
      endpoint: { host: '10.1.2.3', port: CONNECT_POD_PORT },
    });
    expect(withConnectEndpoint({ phase: 'PENDING' }, pod)).toEqual({ phase: 'PENDING' });
  });

  it('is refused without SECRET_KEY, and on a stock apache/spark image (no server jar, no interceptor)', () => {
    expect(() => buildDriverManifests(spec, { cluster, config: { ...config, SECRET_KEY: undefined } })).toThrow(
      /need SECRET_KEY/,
    );
    expect(() =>
      buildDriverManifests(spec, { cluster: { ...cluster, sparkImage: 'apache/spark:3.5.7' }, config }),
    ).toThrow(/has no Spark Connect server/);
  });
});
