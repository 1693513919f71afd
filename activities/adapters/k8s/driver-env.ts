// The environment of the driver container: its pod IP for Spark to bind to, the spec's variables,
// and the storage keys by reference to the driver's secret.
import type { V1EnvVar } from '@kubernetes/client-node';
import type { ManifestContext } from './context';
import { invalidSpec } from './errors';
import { BIND_ADDRESS_ENV, STORAGE_ENV } from './names';
import { noExpansion } from './submit-args';

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export const bindAddressEnv = (): V1EnvVar[] => [
  { name: BIND_ADDRESS_ENV, valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
];

/** The spec's variables, except those the pod sets itself; throws InvalidSpec for an invalid name. */
export function specEnv({ spec, hasKeys }: ManifestContext): V1EnvVar[] {
  for (const name of Object.keys(spec.env)) {
    if (!ENV_NAME.test(name)) throw invalidSpec(`invalid environment variable name '${name}'`);
  }
  const reserved = new Set<string>([BIND_ADDRESS_ENV, ...(hasKeys ? Object.values(STORAGE_ENV) : [])]);
  return Object.entries(spec.env)
    .filter(([k]) => !reserved.has(k))
    .map(([name, value]) => ({ name, value: noExpansion(value) }));
}

export const storageKeyEnv = ({ names, hasKeys }: ManifestContext): V1EnvVar[] =>
  hasKeys
    ? Object.values(STORAGE_ENV).map((key) => ({ name: key, valueFrom: { secretKeyRef: { name: names.secret, key } } }))
    : [];

export const driverEnv = (c: ManifestContext): V1EnvVar[] => [...bindAddressEnv(), ...specEnv(c), ...storageKeyEnv(c)];
