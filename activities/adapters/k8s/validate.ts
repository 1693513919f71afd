// Manifests are checked against the official Kubernetes schema before anything is sent, so a bad
// one fails permanently with the schema's words instead of as an API server refusal.
import { logger } from '../../../lib/log';
import { invalidSpec } from './errors';
import type { DriverManifests } from './manifests';

const log = logger('k8s-adapter');

// kubernetes-models is a devDependency: a production install without it sends manifests unvalidated
// (the API server still validates them) instead of failing to load the worker.
type Validatable = new (data: never) => { validate(): void };
type Models = {
  Pod: Validatable;
  Service: Validatable;
  Secret: Validatable;
  ConfigMap: Validatable;
  NetworkPolicy: Validatable;
};
let modelsLoad: Promise<Models | undefined> | undefined;
function loadModels() {
  modelsLoad ??= Promise.all([
    import('kubernetes-models/v1/Pod'),
    import('kubernetes-models/v1/Service'),
    import('kubernetes-models/v1/Secret'),
    import('kubernetes-models/v1/ConfigMap'),
    import('kubernetes-models/networking.k8s.io/v1/NetworkPolicy'),
  ]).then(
    ([p, s, sec, cm, np]) => ({
      Pod: p.Pod as Validatable,
      Service: s.Service as Validatable,
      Secret: sec.Secret as Validatable,
      ConfigMap: cm.ConfigMap as Validatable,
      NetworkPolicy: np.NetworkPolicy as Validatable,
    }),
    (e: unknown) => {
      log.warn('kubernetes-models is not installed: manifests go to the API server unvalidated', { error: String(e) });
      return undefined;
    },
  );
  return modelsLoad;
}

/** Checks the manifests against the official schema before anything is sent. */
export async function validateManifests(m: DriverManifests): Promise<void> {
  const models = await loadModels();
  if (!models) return;
  const check = (Model: Validatable, obj: object, what: string) => {
    try {
      new Model(JSON.parse(JSON.stringify(obj)) as never).validate();
    } catch (e) {
      throw invalidSpec(`invalid ${what} manifest: ${(e as Error).message}`);
    }
  };
  check(models.Pod, m.pod, `pod ${m.names.pod}`);
  if (m.service) check(models.Service, m.service, `service ${m.names.service}`);
  if (m.engineService) check(models.Service, m.engineService, `service ${m.names.engineService}`);
  if (m.secret) check(models.Secret, m.secret, `secret ${m.names.secret}`);
  if (m.configMap) check(models.ConfigMap, m.configMap, `configmap ${m.names.configMap}`);
  check(models.NetworkPolicy, m.networkPolicy, `networkpolicy ${m.names.networkPolicy}`);
}
