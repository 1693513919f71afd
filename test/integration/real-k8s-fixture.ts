// What the files on the real kube-apiserver share (testkit/kube): the run's control plane, the Helm chart's
// RBAC installed as a release, moto for the artifacts, a kubelet stand-in running the drivers' pods, and a
// harness whose K8S_NAMESPACE is the chart's drivers' namespace. A file declares it once at its top, starts it
// in its beforeAll and stops it in its afterAll; what differs between files is in the options.
import type { V1Pod } from '@kubernetes/client-node';
import { installChartRbac, helmAvailable, type ChartRelease } from '../../testkit/kube/chart-rbac';
import { createNamespace, k8sAvailable, type ControlPlaneInfo } from '../../testkit/kube/control-plane';
import { startKubelet, type Kubelet, type PodPlan } from '../../testkit/kube/kubelet';
import { sharedControlPlane } from '../../testkit/kube/shared';
import { motoAvailable, type MotoServer } from '../../testkit/moto';
import { startHarness, type Harness } from '../harness';
import { startStorage } from './broken-fixture';

/** Whether this machine has the control plane's binaries (or their build under way), Helm's SDK and moto. */
export const realK8sReady = (): boolean => k8sAvailable() && helmAvailable() && motoAvailable();

export interface RealK8sOptions {
  /** The Helm release and its namespace. */
  release: string;
  releaseNs: string;
  /** Chart values of the release (e.g. `spark.namespaces`). */
  values?: Parameters<typeof installChartRbac>[3];
  /** Namespaces made before the chart is installed (the chart creates only its default one). */
  namespaces?: string[];
  /** Namespaces whose pods the kubelet runs; default: the chart's drivers' namespace. */
  kubeletNamespaces?: string[];
  /** Names the kubelet's node (`node-<name>`) and folder; default: the drivers' namespace. */
  name?: string;
  /** What the kubelet does with each pod. */
  plan(pod: V1Pod): PodPlan;
}

export interface RealK8s {
  cp: ControlPlaneInfo;
  release: ChartRelease;
  kubelet: Kubelet;
  storage: MotoServer;
  h: Harness;
  /** The chart's drivers' namespace, the harness's K8S_NAMESPACE. */
  ns: string;
}

export function realK8s(o: RealK8sOptions) {
  let started: Partial<RealK8s> = {};
  return {
    async start(testDir: string): Promise<RealK8s> {
      const cp = await sharedControlPlane(testDir);
      started.cp = cp;
      await Promise.all((o.namespaces ?? []).map((ns) => createNamespace(cp, ns)));
      const [release, storage] = await Promise.all([
        installChartRbac(cp, o.release, o.releaseNs, o.values),
        startStorage(),
      ]);
      Object.assign(started, { release, storage });
      const ns = release.driverNamespace;
      const name = o.name ?? ns;
      const kubelet = await startKubelet({
        cp,
        nodeName: `node-${name}`,
        namespaces: o.kubeletNamespaces ?? [ns],
        dir: `${testDir}/kubelet-${name}`,
        plan: o.plan,
      });
      started.kubelet = kubelet;
      const h = await startHarness({ env: { K8S_NAMESPACE: ns } });
      started = { cp, release, storage, kubelet, h, ns };
      return started as RealK8s;
    },
    /** Stops what start started, also after a start that failed midway. */
    async stop(): Promise<void> {
      await started.h?.stop();
      await started.kubelet?.stop();
      await started.storage?.stop();
    },
  };
}

/** The body of POST /cluster for a k8s cluster on this control plane, storing artifacts in `storage`, plus `extra`. */
export const realK8sCluster = (
  cp: ControlPlaneInfo,
  storage: MotoServer,
  name: string,
  extra: Record<string, unknown> = {},
) => ({
  name,
  type: 'k8s',
  url: cp.url,
  // Where runners in pods would reach Temporal; the kubelet stand-in's pods do not need it.
  temporalAddress: 'temporal.example:7233',
  sparkStorage: 'main',
  storages: {
    main: {
      sparkBucket: 'spark',
      endpoint: storage.endpoint,
      region: 'us-east-1',
      accessKey: 'broken-access',
      secretKey: 'broken-secret',
    },
  },
  ...extra,
});
