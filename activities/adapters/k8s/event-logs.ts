// A k8s driver's Spark event log, for the stack's History Server. The driver writes it to its cluster's
// storage (spark.eventLog.dir = s3a://<sparkBucket>/spark-events/) when its image reads s3a: ours does; a
// stock apache/spark image only when the driver gets hadoop-aws anyway, for its artifacts, so no download
// is added for the history's sake. A job or cluster that sets spark.eventLog.* itself keeps its settings.
// remove copies the log (finished, else in progress) into SPARK_HISTORY_DIR, the one local folder the
// History Server reads, where it is served until retention removes it, and deletes it from the bucket.
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { logger } from '../../../lib/log';
import { s3ObjectStore } from './artifact-store';
import type { K8sContext } from './client';
import type { ManifestContext } from './context';
import { k8sNames } from './names';
import type { ObjectStore } from './options';
import { driverImage, type SparkConf } from './spark-conf';
import { STOCK_SPARK_IMAGE } from './submit-args';

const log = logger('k8s-adapter');

/** Where drivers' event logs go in their cluster's spark bucket; Spark wants it to be a folder to s3a. */
export const EVENT_LOG_PREFIX = 'spark-events/';

/** The bucket the driver writes its event log to, or none (see above). */
export function eventLogBucket(c: ManifestContext, conf: SparkConf): string | undefined {
  const bucket = c.storage?.sparkBucket;
  if (!bucket) return undefined;
  if (Object.keys(conf).some((k) => k.startsWith('spark.eventLog.'))) return undefined;
  if (STOCK_SPARK_IMAGE.test(driverImage(c, conf)) && !c.artifacts.usesS3a) return undefined;
  return bucket;
}

/** The conf with the event log in that bucket (eventLogBucket's answer), if any. */
export function withEventLog(conf: SparkConf, bucket: string | undefined): SparkConf {
  return bucket
    ? { ...conf, 'spark.eventLog.enabled': 'true', 'spark.eventLog.dir': `s3a://${bucket}/${EVENT_LOG_PREFIX}` }
    : conf;
}

/** The cluster's storage client, one per adapter (made on first use). */
export function objectStoreOf(k: K8sContext): ObjectStore {
  const c = k.opts.cluster;
  k.objectStore ??= k.opts.objectStore ?? s3ObjectStore(c.storages?.[c.sparkStorage ?? 's3'] ?? {});
  return k.objectStore;
}

/**
 * Copies the driver's event log into the History Server's folder and deletes it from the bucket; never
 * fails (the deletes of remove go ahead whatever the log does), says why in the log instead.
 */
export async function saveEventLog(k: K8sContext, driverId: string): Promise<void> {
  const historyDir = k.opts.config.SPARK_HISTORY_DIR;
  const c = k.opts.cluster;
  const bucket = c.storages?.[c.sparkStorage ?? 's3']?.sparkBucket;
  if (!historyDir || !bucket) return;
  const { appId } = k8sNames(driverId);
  try {
    const store = objectStoreOf(k);
    await mkdir(historyDir, { recursive: true });
    // Finished, else (a driver killed or lost) in progress: the History Server shows it as incomplete.
    for (const name of [appId, `${appId}.inprogress`]) {
      // A dot file is not read by the History Server until renamed into place.
      const tmp = path.join(historyDir, `.${name}.${process.pid}.tmp`);
      if (!(await store.get(bucket, `${EVENT_LOG_PREFIX}${name}`, tmp))) continue;
      await rename(tmp, path.join(historyDir, name));
      if (name === appId) await rm(path.join(historyDir, `${appId}.inprogress`), { force: true });
      await store.deletePrefix(bucket, `${EVENT_LOG_PREFIX}${appId}`);
      // s3a took the folder's marker away when the driver wrote its log: the folder stays for the drivers
      // starting now (launch puts it too).
      await store.ensureFolder(bucket, EVENT_LOG_PREFIX);
      return;
    }
  } catch (e) {
    log.warn('could not keep the event log of a driver for the History Server', {
      driverId,
      error: k.scrub(e instanceof Error ? e.message : String(e)),
    });
  }
}
