// The secret of a group instance's direct execute channel (runner/spark_runner/direct.py): HMAC-SHA256 of
// the driver id under SECRET_KEY. The cluster adapter hands it to the driver at launch and the API
// computes the same to call it, so it never travels through workflow histories or the read model.
import { createHmac } from 'node:crypto';

/** Header the runner checks. */
export const DIRECT_SECRET_HEADER = 'x-runner-secret';

export const directSecret = (secretKey: string, driverId: string): string =>
  createHmac('sha256', Buffer.from(secretKey, 'hex')).update(`direct-execute/${driverId}`).digest('hex');

/**
 * A Spark Connect server's secret (scripts/connect/ServerSecretInterceptor.java refuses calls without it), the
 * same way: only the gateway, which computes it from the server's driver id, reaches the server.
 */
export const CONNECT_SECRET_HEADER = 'x-connect-server-secret';

export const connectServerSecret = (secretKey: string, driverId: string): string =>
  createHmac('sha256', Buffer.from(secretKey, 'hex')).update(`connect-server/${driverId}`).digest('hex');
