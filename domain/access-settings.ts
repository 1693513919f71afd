// Spark properties that give a k8s driver's pods access beyond their own: secrets and config maps of the
// namespace, host or other volumes, whole pod specs (pod templates and feature steps can set hostNetwork,
// privileged, any volume), another service account or API credentials, another namespace. A k8s cluster
// refuses them unless its `allowedAccessSettings` names their kind, wherever they come from (a job's, group's
// or schedule's jobConfig, Livy conf, the cluster's own defaultApplicationConfig, which SQL engines run with).
// Pure: the API refuses with it before anything starts, and the k8s adapter again before it creates a pod.

export const AccessSetting = {
  /** Kubernetes secrets (and config maps) of the namespace mounted into pods or read into their environment. */
  SECRETS: 'secrets',
  /** Volumes of any type: hostPath, persistentVolumeClaim, nfs, emptyDir... */
  VOLUMES: 'volumes',
  /** Pod templates and pod feature steps: any field of a pod spec (hostNetwork, privileged, volumes). */
  POD_TEMPLATES: 'podTemplates',
  /** The driver's or executors' service account, and with it their rights on the Kubernetes API. */
  SERVICE_ACCOUNT: 'serviceAccount',
  /** Other spark.kubernetes.authenticate.* settings: tokens, client keys and certificates for the API server. */
  CREDENTIALS: 'credentials',
  /** Another namespace than the drivers'. */
  NAMESPACE: 'namespace',
} as const;
export type AccessSetting = (typeof AccessSetting)[keyof typeof AccessSetting];
export const ACCESS_SETTINGS = Object.values(AccessSetting) as [AccessSetting, ...AccessSetting[]];

interface Rule {
  setting: AccessSetting;
  /** Matched against the key lowercased and trimmed: Spark reads keys as written, so matching wider is safe. */
  match: RegExp;
  grants: string;
}

// First match wins: the service-account keys come before the rest of spark.kubernetes.authenticate.*.
const RULES: readonly Rule[] = [
  {
    setting: AccessSetting.SECRETS,
    match: /^spark\.kubernetes\.(driver|executor)\.(secrets|secretkeyref)(\.|$)/,
    grants: 'puts a Kubernetes secret of the namespace into the pods',
  },
  {
    setting: AccessSetting.SECRETS,
    match: /^spark\.kubernetes\.(kerberos\.|hadoop\.configmapname$|container\.image\.pullsecrets$)/,
    grants: 'mounts or uses a secret or config map of the namespace',
  },
  {
    setting: AccessSetting.VOLUMES,
    match: /^spark\.kubernetes\.(driver|executor)\.volumes(\.|$)/,
    grants: 'mounts a volume into the pods',
  },
  {
    setting: AccessSetting.POD_TEMPLATES,
    match: /^spark\.kubernetes\.(driver|executor)\.(podtemplatefile|podtemplatecontainername|pod\.featuresteps)$/,
    grants: 'shapes the pods from a template or feature step (host network, privileged containers, any volume)',
  },
  {
    setting: AccessSetting.SERVICE_ACCOUNT,
    match: /^spark\.kubernetes\.authenticate\.(driver|executor)\.serviceaccountname$/,
    grants: 'runs the pods as another service account',
  },
  {
    setting: AccessSetting.CREDENTIALS,
    match: /^spark\.kubernetes\.authenticate(\.|$)/,
    grants: 'gives the driver other credentials for the Kubernetes API',
  },
  {
    setting: AccessSetting.NAMESPACE,
    match: /^spark\.kubernetes\.namespace$/,
    grants: 'moves the pods to another namespace',
  },
];

export interface AccessRefusal {
  key: string;
  setting: AccessSetting;
  /** What the key would give the pods, in words. */
  grants: string;
}

/** The rule a Spark property falls under, if it grants access. */
export function accessRuleOf(key: string): Omit<AccessRefusal, 'key'> | undefined {
  const k = key.trim().toLowerCase();
  const rule = RULES.find((r) => r.match.test(k));
  return rule && { setting: rule.setting, grants: rule.grants };
}

/** The properties of `conf` that grant access of a kind `allowed` does not name, in the conf's order. */
export function refusedAccessSettings(
  conf: Record<string, string>,
  allowed: readonly string[] | undefined,
): AccessRefusal[] {
  const ok = new Set(allowed ?? []);
  return Object.keys(conf).flatMap((key) => {
    const rule = accessRuleOf(key);
    return rule && !ok.has(rule.setting) ? [{ key, ...rule }] : [];
  });
}

/** One sentence naming every refused key, its kind and the cluster setting that would allow it. */
export function accessRefusalMessage(field: string, clusterName: string, refusals: readonly AccessRefusal[]): string {
  const each = refusals.map((r) => `${r.key} ${r.grants} ('${r.setting}')`).join('; ');
  const kinds = [...new Set(refusals.map((r) => `'${r.setting}'`))].join(', ');
  return (
    `${field}: ${each}. Cluster '${clusterName}' does not allow it: an admin can add ${kinds} to the ` +
    `cluster's allowedAccessSettings`
  );
}
