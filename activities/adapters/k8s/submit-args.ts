// The spark-submit arguments of a k8s driver (client mode inside the pod), as a list of small option
// functions, one concern each.
import { HADOOP_AWS_PACKAGE } from './options';
import type { ManifestContext } from './context';
import { driverImage, type SparkConf } from './spark-conf';

export type ArgPart = (c: ManifestContext, conf: SparkConf) => string[];

const IN_CLUSTER_MASTER = 'k8s://https://kubernetes.default.svc';

/** Kubernetes expands $(VAR) in args and env values; `$$` is its escape for a literal `$`. */
export const noExpansion = (s: string) => s.replaceAll('$', '$$$$');

/** `flag a,b,c`, or nothing for an empty list. */
const listOption = (flag: string, values: string[]): string[] =>
  values.length ? [flag, noExpansion(values.join(','))] : [];

/** Stock Apache Spark images, which lack the s3a filesystem (the driver image of deploy/docker has it). */
export const STOCK_SPARK_IMAGE = /^(docker\.io\/)?(library\/)?(apache\/spark|spark):/;

/**
 * The job's packages, plus hadoop-aws when artifacts come over s3a, the driver runs a stock apache/spark
 * image and the job brings none.
 */
export function sparkPackages(c: ManifestContext, conf: SparkConf): string[] {
  const packages = [...c.spec.spark.packages];
  const needsS3a = c.artifacts.usesS3a && STOCK_SPARK_IMAGE.test(driverImage(c, conf));
  if (needsS3a && !packages.some((p) => p.includes(':hadoop-aws:'))) packages.push(HADOOP_AWS_PACKAGE);
  return packages;
}

export const masterOptions: ArgPart = (c) => [
  '--master',
  IN_CLUSTER_MASTER,
  '--deploy-mode',
  'client',
  '--name',
  noExpansion(c.spec.spark.name),
];
export const classOption: ArgPart = ({ main }) => (main.mainClass ? ['--class', noExpansion(main.mainClass)] : []);

export const confOptions: ArgPart = (_, conf) =>
  Object.entries(conf).flatMap(([k, v]) =>
    // Our bind address (set last in the conf, so always ours) is the one value Kubernetes must expand: the pod IP.
    ['--conf', k === 'spark.driver.bindAddress' ? `${k}=${v}` : noExpansion(`${k}=${v}`)],
  );

export const packagesOption: ArgPart = (c, conf) => listOption('--packages', sparkPackages(c, conf));
export const jarsOption: ArgPart = ({ main }) => listOption('--jars', main.extraJars);
export const pyFilesOption: ArgPart = ({ main }) => listOption('--py-files', main.extraPyFiles);
export const filesOption: ArgPart = ({ artifacts }) => listOption('--files', artifacts.files);
export const applicationArgs: ArgPart = ({ main, spec }) => [
  noExpansion(main.primary),
  ...spec.spark.args.map(noExpansion),
];

export const ARG_PARTS: readonly ArgPart[] = [
  masterOptions,
  classOption,
  confOptions,
  packagesOption,
  jarsOption,
  pyFilesOption,
  filesOption,
  applicationArgs,
];

export const submitArgs = (c: ManifestContext, conf: SparkConf, parts: readonly ArgPart[] = ARG_PARTS): string[] =>
  parts.flatMap((part) => part(c, conf));

/**
 * The start of a server's arguments (a SPARK_SQL engine's Thrift Server, a Spark Connect server): spark-submit
 * knows their class, so they have no primary resource of the job's, no application arguments, no py-files.
 */
export const SERVER_ARG_PARTS: readonly ArgPart[] = [
  masterOptions,
  classOption,
  confOptions,
  packagesOption,
  jarsOption,
  filesOption,
];
