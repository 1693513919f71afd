// The access rule of k8s clusters (domain/access-settings.ts): which Spark properties give pods access beyond
// their own, what a cluster's allowedAccessSettings lets through, and the message the API answers with.
import { describe, expect, it } from 'vitest';
import {
  accessRefusalMessage,
  accessRuleOf,
  ACCESS_SETTINGS,
  refusedAccessSettings,
} from '../../domain/access-settings';

describe('access-granting Spark settings', () => {
  it.each([
    ['spark.kubernetes.driver.secrets.db-creds', 'secrets'],
    ['spark.kubernetes.executor.secrets.spark-orchestrator', 'secrets'],
    ['spark.kubernetes.executor.secretKeyRef.SECRET_KEY', 'secrets'],
    ['spark.kubernetes.driver.secretKeyRef.MONGO_URL', 'secrets'],
    ['spark.kubernetes.kerberos.tokenSecret.name', 'secrets'],
    ['spark.kubernetes.hadoop.configMapName', 'secrets'],
    ['spark.kubernetes.container.image.pullSecrets', 'secrets'],
    ['spark.kubernetes.executor.volumes.hostPath.root.mount.path', 'volumes'],
    ['spark.kubernetes.executor.volumes.hostPath.root.options.path', 'volumes'],
    ['spark.kubernetes.driver.volumes.persistentVolumeClaim.data.options.claimName', 'volumes'],
    ['spark.kubernetes.executor.volumes.nfs.share.options.server', 'volumes'],
    ['spark.kubernetes.executor.volumes.emptyDir.tmp.mount.path', 'volumes'],
    ['spark.kubernetes.executor.podTemplateFile', 'podTemplates'],
    ['spark.kubernetes.driver.podTemplateFile', 'podTemplates'],
    ['spark.kubernetes.executor.podTemplateContainerName', 'podTemplates'],
    ['spark.kubernetes.executor.pod.featureSteps', 'podTemplates'],
    ['spark.kubernetes.authenticate.driver.serviceAccountName', 'serviceAccount'],
    ['spark.kubernetes.authenticate.executor.serviceAccountName', 'serviceAccount'],
    ['spark.kubernetes.authenticate.oauthToken', 'credentials'],
    ['spark.kubernetes.authenticate.driver.oauthTokenFile', 'credentials'],
    ['spark.kubernetes.authenticate.submission.clientKeyFile', 'credentials'],
    ['spark.kubernetes.authenticate.caCertFile', 'credentials'],
    ['spark.kubernetes.namespace', 'namespace'],
    // Spark reads keys as written; matching ignores case and spaces, so no spelling slips through.
    ['Spark.Kubernetes.Executor.Volumes.HostPath.x.mount.path', 'volumes'],
    [' spark.kubernetes.namespace ', 'namespace'],
    ['SPARK.KUBERNETES.AUTHENTICATE.DRIVER.SERVICEACCOUNTNAME', 'serviceAccount'],
  ])('%s is a %s setting', (key, setting) => {
    expect(accessRuleOf(key)?.setting).toBe(setting);
  });

  it.each([
    'spark.sql.shuffle.partitions',
    'spark.kubernetes.container.image',
    'spark.kubernetes.driver.container.image',
    'spark.kubernetes.memoryOverheadFactor',
    'spark.kubernetes.driver.limit.cores',
    'spark.kubernetes.executor.request.cores',
    'spark.kubernetes.executor.label.team',
    'spark.kubernetes.node.selector.pool',
    'spark.executor.memory',
    'spark.hadoop.fs.s3a.endpoint',
  ])('%s grants nothing', (key) => {
    expect(accessRuleOf(key)).toBeUndefined();
  });

  it('every kind is a documented value of allowedAccessSettings', () => {
    expect(ACCESS_SETTINGS).toEqual([
      'secrets',
      'volumes',
      'podTemplates',
      'serviceAccount',
      'credentials',
      'namespace',
    ]);
  });

  it('refuses each key whose kind the cluster does not allow, in the order given, and lets the rest through', () => {
    const conf = {
      'spark.sql.shuffle.partitions': '4',
      'spark.kubernetes.executor.volumes.hostPath.root.mount.path': '/host',
      'spark.kubernetes.authenticate.driver.serviceAccountName': 'spark-orchestrator',
      'spark.kubernetes.executor.secrets.spark-orchestrator': '/mnt/s',
    };
    expect(refusedAccessSettings(conf, undefined).map((r) => [r.key, r.setting])).toEqual([
      ['spark.kubernetes.executor.volumes.hostPath.root.mount.path', 'volumes'],
      ['spark.kubernetes.authenticate.driver.serviceAccountName', 'serviceAccount'],
      ['spark.kubernetes.executor.secrets.spark-orchestrator', 'secrets'],
    ]);
    expect(refusedAccessSettings(conf, ['serviceAccount', 'volumes']).map((r) => r.key)).toEqual([
      'spark.kubernetes.executor.secrets.spark-orchestrator',
    ]);
    expect(refusedAccessSettings(conf, [...ACCESS_SETTINGS])).toEqual([]);
    // Allowing the service account does not allow other credentials.
    expect(
      refusedAccessSettings({ 'spark.kubernetes.authenticate.oauthTokenFile': '/t' }, ['serviceAccount']).map(
        (r) => r.setting,
      ),
    ).toEqual(['credentials']);
    expect(refusedAccessSettings({}, [])).toEqual([]);
  });

  it('says which key, what it would grant, and which setting of the cluster allows it', () => {
    const refused = refusedAccessSettings(
      {
        'spark.kubernetes.executor.secrets.db': '/mnt',
        'spark.kubernetes.executor.secretKeyRef.K': 'db:k',
        'spark.kubernetes.namespace': 'kube-system',
      },
      [],
    );
    const m = accessRefusalMessage('jobConfig', 'prod', refused);
    expect(m).toMatch(/^jobConfig: spark\.kubernetes\.executor\.secrets\.db puts a Kubernetes secret/);
    expect(m).toContain('spark.kubernetes.executor.secretKeyRef.K');
    expect(m).toContain('spark.kubernetes.namespace moves the pods to another namespace');
    expect(m).toContain(
      "Cluster 'prod' does not allow it: an admin can add 'secrets', 'namespace' to the cluster's allowedAccessSettings",
    );
  });
});
