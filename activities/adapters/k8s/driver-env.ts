// The environment of the driver container: its pod IP for Spark to bind to, the spec's variables (a
// runner's Temporal address as the cluster sees it), the storage keys and a runner's direct-channel secret by
// reference to the driver's secret.
import type { V1EnvVar } from '@kubernetes/client-node';
import type { ManifestContext } from './context';
import { invalidSpec } from './errors';
import { BIND_ADDRESS_ENV, DIRECT_ENV, STORAGE_ENV } from './names';
import { noExpansion } from './submit-args';

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export const bindAddressEnv = (): V1EnvVar[] => [
  { name: BIND_ADDRESS_ENV, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
];

const LOOPBACK = /^(localhost|127\.[\d.]+|\[?::1\]?|0\.0\.0\.0)(:\d+)?$/i;

/**
 * A runner's Temporal address: the cluster's temporalAddress, else the worker's own (in the spec's env)
 * unless that is a loopback address, which inside a pod is the pod. Throws InvalidSpec then.
 */
export function runnerTemporalAddress({ spec, cluster }: ManifestContext): string | undefined {
  if (spec.role !== 'runner') return undefined;
  if (cluster.temporalAddress) return cluster.temporalAddress;
  const own = spec.env.TEMPORAL_ADDRESS;
  if (own && LOOPBACK.test(own.trim())) {
    throw invalidSpec(
      `cluster '${cluster.name}' has no temporalAddress, and the worker's Temporal address ${own} would be the driver pod itself: set the cluster's temporalAddress to the Temporal frontend as seen from inside the cluster`,
    );
  }
  return own;
}

/** The spec's variables, except those the pod sets itself; throws InvalidSpec for an invalid name. */
export function specEnv(c: ManifestContext): V1EnvVar[] {
  const { spec, hasKeys } = c;
  for (const name of Object.keys(spec.env)) {
    if (!ENV_NAME.test(name)) throw invalidSpec(`invalid environment variable name '${name}'`);
  }
  const reserved = new Set<string>([
    BIND_ADDRESS_ENV,
    ...(hasKeys ? Object.values(STORAGE_ENV) : []),
    ...(c.directSecret ? Object.values(DIRECT_ENV) : []),
  ]);
  const temporal = runnerTemporalAddress(c);
  const env = temporal ? { ...spec.env, TEMPORAL_ADDRESS: temporal } : spec.env;
  return Object.entries(env)
    .filter(([k]) => !reserved.has(k))
    .map(([name, value]) => ({ name, value: noExpansion(value) }));
}

export const storageKeyEnv = ({ names, hasKeys }: ManifestContext): V1EnvVar[] =>
  hasKeys
    ? Object.values(STORAGE_ENV).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: names.secret, key } } }))
    : [];

/**
 * A runner's direct execute channel: it listens on the pod IP (the service's pods reach it there; the driver's
 * NetworkPolicy admits them) and checks the secret, read from the driver's secret.
 */
export const directChannelEnv = ({ names, directSecret }: ManifestContext): V1EnvVar[] =>
  directSecret
    ? [
        { name: DIRECT_ENV.HOST, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        { name: DIRECT_ENV.SECRET, valueFrom: { secretKeyRef: { name: names.secret, key: DIRECT_ENV.SECRET } } },
      ]
    : [];

export const driverEnv = (c: ManifestContext): V1EnvVar[] => [
  ...bindAddressEnv(),
  ...specEnv(c),
  ...storageKeyEnv(c),
  ...directChannelEnv(c),
];
