// The cluster's object storage as the artifact store of its pods: before a launch, the files of the
// worker's artifact store that a driver needs are uploaded to its storage's spark bucket (S3 or any
// S3-compatible server, through the AWS SDK), under the keys artifacts.ts points the pod at. Uploads are
// idempotent: a file of SMALL_FILE bytes or more is not sent again when an object of its size is under the
// key, so a retried launch, a group's next instance or a schedule's next run uploads no large jar twice; a
// smaller file is simply put again (one request, where asking first would be two). removeArtifacts deletes
// an owner's objects.
import { createWriteStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../../domain/driver';
import { ARTIFACT_PREFIX, type ArtifactUpload } from './artifacts';
import { invalidSpec } from './errors';
import type { K8sStorage, ObjectStore } from './options';

/** S3 error codes that no retry will change: the bucket or the keys are wrong. */
const PERMANENT_CODES = new Set([
  'NoSuchBucket',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidBucketName',
]);

/** Below this size a file is put without asking whether the object is there already. */
export const SMALL_FILE = 1024 * 1024;

/** An S3 client for one storage: its endpoint (path-style, as S3-compatible servers want), region and keys. */
export function s3ObjectStore(storage: K8sStorage): ObjectStore {
  const client = new S3Client({
    ...(storage.endpoint ? { endpoint: storage.endpoint, forcePathStyle: true } : {}),
    region: storage.region || 'us-east-1',
    ...(storage.accessKey || storage.secretKey
      ? { credentials: { accessKeyId: storage.accessKey ?? '', secretAccessKey: storage.secretKey ?? '' } }
      : {}),
    // S3-compatible servers (MinIO, Ceph, older versions) do not all know the SDK's newer default checksums.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
  const sizeOf = async (Bucket: string, Key: string): Promise<number | undefined> => {
    try {
      return (await client.send(new HeadObjectCommand({ Bucket, Key }))).ContentLength;
    } catch (e) {
      if (e instanceof S3ServiceException && e.$metadata.httpStatusCode === 404 && e.name !== 'NoSuchBucket')
        return undefined;
      throw e;
    }
  };
  return {
    async put(Bucket, Key, file) {
      // The file is opened here, so a missing one fails this call (not a stream nobody listens to), and the
      // handle is closed whether or not the SDK read the body (a refused request never does).
      const handle = await open(file);
      try {
        const { size } = await handle.stat();
        if (size >= SMALL_FILE && (await sizeOf(Bucket, Key)) === size) return;
        const Body = handle.createReadStream({ autoClose: false });
        await client.send(new PutObjectCommand({ Bucket, Key, Body, ContentLength: size }));
      } finally {
        await handle.close();
      }
    },
    async deletePrefix(Bucket, Prefix) {
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix, ContinuationToken }));
        // One by one: DeleteObjects needs a checksum header not every S3-compatible server accepts.
        for (const o of page.Contents ?? [])
          if (o.Key) await client.send(new DeleteObjectCommand({ Bucket, Key: o.Key }));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
    },
    async ensureFolder(Bucket, Key) {
      await client.send(new PutObjectCommand({ Bucket, Key, Body: '', ContentLength: 0 }));
    },
    async get(Bucket, Key, file) {
      let body: Readable;
      try {
        body = (await client.send(new GetObjectCommand({ Bucket, Key }))).Body as Readable;
      } catch (e) {
        if (e instanceof S3ServiceException && e.$metadata.httpStatusCode === 404) return false;
        throw e;
      }
      try {
        await pipeline(body, createWriteStream(file));
      } catch (e) {
        await rm(file, { force: true });
        throw e;
      }
      return true;
    },
  };
}

/** Words an upload failure; permanent (InvalidSpec) for a missing file, a missing bucket or refused keys. */
function uploadFailure(e: unknown, u: ArtifactUpload, bucket: string, scrub: (m: string) => string): Error {
  if ((e as NodeJS.ErrnoException).code === 'ENOENT')
    return invalidSpec(`artifact ${u.file} is missing from the artifact store`);
  const code = (e as { name?: string; Code?: string }).Code ?? (e as Error).name;
  const message = scrub(`uploading ${u.file} to s3://${bucket}/${u.key} failed: ${code}: ${(e as Error).message}`);
  // A HEAD request's 403 has no body to name the code: refused all the same.
  const refused = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 403;
  return PERMANENT_CODES.has(code) || refused
    ? ApplicationFailure.nonRetryable(message, FailureType.INVALID_SPEC)
    : ApplicationFailure.retryable(message, 'ArtifactUpload');
}

/**
 * Uploads what a driver needs, a few files at a time. After the first failure no new upload starts, and
 * the call returns (with that failure) only once the uploads in flight have ended: nothing of this launch
 * still reads the artifact store after it.
 */
export async function uploadArtifacts(
  store: ObjectStore,
  bucket: string,
  uploads: ArtifactUpload[],
  scrub: (m: string) => string = (m) => m,
): Promise<void> {
  const queue = [...uploads];
  let failure: Error | undefined;
  const worker = async () => {
    for (let u = queue.shift(); u && !failure; u = queue.shift()) {
      try {
        await store.put(bucket, u.key, u.file);
      } catch (e) {
        failure ??= uploadFailure(e, u, bucket, scrub);
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  if (failure) throw failure;
}

/** Deletes the artifacts of a job, group or schedule (its id is the first folder in the artifact store). */
export async function removeArtifacts(store: ObjectStore, bucket: string, ownerId: string): Promise<void> {
  if (!ownerId || ownerId.includes('/')) throw new Error(`invalid artifact owner id '${ownerId}'`);
  await store.deletePrefix(bucket, `${ARTIFACT_PREFIX}${ownerId}/`);
}
