// The NetworkPolicy of a driver pod: ingress only from the service's own pods (labelled
// spark-orchestrator.io/client=true, in any namespace: API pods reach SQL engines and the Spark UI) and
// from the driver's own executors on Spark's RPC and block-manager ports. Egress stays open: drivers
// reach the API server, Temporal and object storage. Enforced only where the cluster's network plugin
// enforces NetworkPolicies.
import type { V1NetworkPolicy, V1NetworkPolicyIngressRule, V1NetworkPolicySpec } from '@kubernetes/client-node';
import type { ManifestContext } from './context';
import { Labels, Ports } from './names';
import { objectMeta } from './resources';

/** An ingress rule as Kubernetes writes it (`from`; the client library's type calls it `_from`). */
type IngressRule = Omit<V1NetworkPolicyIngressRule, '_from'> & { from?: V1NetworkPolicyIngressRule['_from'] };
/** A NetworkPolicy as Kubernetes writes it, the form tests and validation read. */
export type NetworkPolicyManifest = Omit<V1NetworkPolicy, 'spec'> & {
  spec: Omit<V1NetworkPolicySpec, 'ingress'> & { ingress: IngressRule[] };
};

/** The client library's form, which it serializes back to Kubernetes' `from`. */
export const forClient = (np: NetworkPolicyManifest): V1NetworkPolicy => ({
  ...np,
  spec: { ...np.spec, ingress: np.spec.ingress.map(({ from, ...rule }) => ({ ...rule, _from: from })) },
});

export const networkPolicyManifest = (c: ManifestContext): NetworkPolicyManifest => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: objectMeta(c, c.names.networkPolicy),
  spec: {
    // The driver pod only: executors carry the driver-id label too, but not the driver's role.
    podSelector: { matchLabels: { [Labels.DRIVER_ID]: c.names.base, [Labels.ROLE]: c.spec.role } },
    policyTypes: ['Ingress'],
    ingress: [
      {
        from: [{ namespaceSelector: {}, podSelector: { matchLabels: { [Labels.CLIENT]: 'true' } } }],
      },
      {
        from: [{ podSelector: { matchLabels: { [Labels.DRIVER_ID]: c.names.base, [Labels.SPARK_ROLE]: 'executor' } } }],
        ports: [
          { protocol: 'TCP', port: Ports.DRIVER },
          { protocol: 'TCP', port: Ports.BLOCK_MANAGER },
        ],
      },
    ],
  },
});
