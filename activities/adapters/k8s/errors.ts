// Errors of the k8s adapter: a spec or cluster that cannot work fails permanently (non-retryable
// ApplicationFailure); a failed API call is a K8sApiError, retried, worded without request details
// or credentials. A create the API server refuses for good (an invalid manifest, 400/422; credentials
// it rejects, 401; RBAC that does not allow it, 403) fails the driver at once with the server's words.
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../../domain/driver';

/** ApplicationFailure type of a cluster document the adapter cannot connect with. */
export const INVALID_CLUSTER = 'InvalidClusterConfig';

/**
 * ApplicationFailure type of a read the cluster could not answer now (down, refusing the credentials or the
 * RBAC). Non-retryable where a caller waits (a log read): the API answers 503 with the message at once
 * instead of retrying past its deadline.
 */
export const CLUSTER_UNAVAILABLE = 'ClusterUnavailable';

/** A permanent problem with what we were asked to launch: retrying will not help. */
export const invalidSpec = (message: string) => ApplicationFailure.nonRetryable(message, FailureType.INVALID_SPEC);

/** A failed API call, described without request details or credentials. Retryable. */
export class K8sApiError extends Error {
  override readonly name = 'K8sApiError';
  constructor(
    message: string,
    /** HTTP status; undefined when the server did not answer. */
    readonly code?: number,
    /** Kubernetes Status reason (NotFound, AlreadyExists, Invalid, Forbidden, ...). */
    readonly reason?: string,
  ) {
    super(message);
  }
}

export const codeOf = (e: unknown) => (e instanceof ApiException ? (e.code as number) : undefined);
export const isNotFound = (e: unknown) => codeOf(e) === 404;

function statusBody(e: ApiException<unknown>): { reason?: string; message?: string } {
  const b = e.body;
  const text =
    typeof b === 'string'
      ? b
      : Buffer.isBuffer(b)
        ? b.toString('utf8')
        : b && typeof b === 'object'
          ? JSON.stringify(b)
          : '';
  try {
    const s = JSON.parse(text) as { kind?: string; reason?: string; message?: string };
    return s && typeof s === 'object' ? { reason: s.reason, message: s.message } : {};
  } catch {
    return { message: text.slice(0, 300) || undefined };
  }
}

/** Statuses of a refused create that no retry changes without someone changing the cluster or the job. */
const PERMANENT_CREATE_CODES = new Set([400, 401, 403, 422]);

/**
 * How the adapter words a failed call to the API server at `host`: `describe` for reads (the caller
 * decides), `fail` for creates and deletes (a refusal in PERMANENT_CREATE_CODES is permanent, the rest is
 * retried; deletes are only ever asked of objects the adapter created, so RBAC once allowed them).
 * `scrub` takes every credential out of the message.
 */
export function apiErrors(host: string, scrub: (msg: string) => string) {
  const describe = (e: unknown, what: string): K8sApiError => {
    if (e instanceof ApiException) {
      const s = statusBody(e);
      const reason = s.reason ?? (e.code === 401 ? 'Unauthorized' : undefined);
      return new K8sApiError(
        scrub(
          `Kubernetes API (${host}) ${what}: HTTP ${e.code}${reason ? ` ${reason}` : ''}${s.message ? `: ${s.message}` : ''}`,
        ),
        e.code,
        reason,
      );
    }
    if (e instanceof ApplicationFailure) return new K8sApiError(scrub(e.message));
    const err = e as NodeJS.ErrnoException;
    const detail =
      err?.code && !String(err.message).includes(err.code) ? `${err.code} ${err.message}` : String(err?.message ?? e);
    return new K8sApiError(scrub(`Kubernetes API server ${host} unreachable while trying to ${what}: ${detail}`));
  };
  const fail = (e: unknown, what: string): Error => {
    if (e instanceof ApplicationFailure) return e;
    const d = describe(e, what);
    return d.code !== undefined && PERMANENT_CREATE_CODES.has(d.code)
      ? ApplicationFailure.nonRetryable(d.message, FailureType.INVALID_SPEC)
      : d;
  };
  return { describe, fail };
}
