// A YARN cluster's Hadoop configuration: the properties an admin may store with the cluster (core-site and
// yarn-site), the Spark settings a request may not send to a YARN cluster, and the configuration folder
// spark-submit is pointed at (HADOOP_CONF_DIR).
//
// Refused in the cluster's `hadoopConf` (400, naming the key), because they grant access or point drivers at
// other hosts than the cluster's own fields say:
//   - security and identity: hadoop.security.*, hadoop.proxyuser.*, hadoop.http.authentication.*, hadoop.ssl.*,
//     *kerberos*, *keytab*, *principal*, and anything holding a secret (*password*, *secret*, *.access.key,
//     *.session.token, *credential*): the cluster's hadoopConf is returned in plain text
//   - the ResourceManager's hosts (yarn.resourcemanager.hostname*, .ha.*), and its addresses
//     (yarn.resourcemanager.*address) on another host than the cluster's `url` names: drivers are not pointed
//     at other hosts than the cluster's own ResourceManager
//   - the queue (mapreduce.job.queuename, yarn.*.queue*): the cluster's `queue` field, so its quota holds
//   - fs.defaultFS and fs.default.name must be a URI of a known filesystem scheme
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const REFUSED_HADOOP: [RegExp, string][] = [
  [/^hadoop\.(security|proxyuser|http\.authentication|ssl)\./, 'sets security or impersonation'],
  [/kerberos|keytab|principal/, 'sets Kerberos identities (not supported)'],
  [/password|secret|\.access\.key|session\.token|credential/, 'holds a secret (hadoopConf is not secret storage)'],
  [/^yarn\.resourcemanager\.(hostname.*|ha\..*|cluster-id)$/, "names ResourceManager hosts: use the cluster's url"],
  [/^mapreduce\.job\.queuename$|^yarn\..*queue/, "chooses the queue: use the cluster's queue"],
];

const FS_SCHEMES = /^(file|hdfs|viewfs|s3a|abfs|abfss|gs|wasb|wasbs|o3fs|ofs):\/\//;
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,255}$/;

/**
 * Problems of a hadoopConf, each [key, message] (empty: fine). `rmHost`: the host of the cluster's
 * ResourceManager, the only host its yarn.resourcemanager.*address properties may name.
 */
export function hadoopConfProblems(conf: Record<string, string>, rmHost: string | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, value] of Object.entries(conf)) {
    const k = key.toLowerCase();
    if (!KEY.test(key)) out.push([key, 'is not a Hadoop property name (letters, digits, . _ -)']);
    for (const [re, why] of REFUSED_HADOOP) if (re.test(k)) out.push([key, why]);
    if (/^yarn\.resourcemanager\..*address$/.test(k)) {
      const m = /^([A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(value.trim());
      if (!m) out.push([key, `'${value}' is not host:port`]);
      else if (m[1].toLowerCase() !== rmHost?.toLowerCase())
        out.push([key, `names host ${m[1]}, not the ResourceManager's (${rmHost ?? "the cluster's url"})`]);
    }
    if ((k === 'fs.defaultfs' || k === 'fs.default.name') && !FS_SCHEMES.test(value))
      out.push([key, `'${value}' is not a filesystem URI (file://, hdfs://, s3a://, ...)`]);
  }
  return out;
}

/**
 * Spark settings a request may not give a YARN driver: its queue (the cluster's quota is its queue's), the
 * ResourceManager or any Hadoop security setting (spark.hadoop.* reaches the Hadoop configuration), Kerberos
 * identities, tokens of other services, the tags the adapter finds its applications by, the master.
 */
const REFUSED_SPARK: [RegExp, string][] = [
  [/^spark\.yarn\.queue$/, 'moves the driver to another queue'],
  [/^spark\.hadoop\.yarn\./, 'changes the YARN client configuration (ResourceManager, queue)'],
  [/^spark\.hadoop\.(hadoop\.(security|proxyuser)|.*kerberos)/, 'changes Hadoop security settings'],
  [/^spark\.hadoop\.fs\.default(fs|\.name)$/, 'changes the default filesystem'],
  [
    /^spark\.(yarn\.(principal|keytab|access\.|kerberos)|kerberos\.|security\.credentials\.)/,
    'sets Kerberos identities or delegation tokens',
  ],
  [/^spark\.yarn\.tags$/, 'sets the application tags the service finds its drivers by'],
  [/^spark\.(master|submit\.deploymode)$/, 'changes where the driver runs'],
];

/** The keys of `conf` a YARN cluster refuses, each with what it would do. */
export const refusedYarnConf = (conf: Record<string, string>): { key: string; why: string }[] =>
  Object.keys(conf).flatMap((key) => {
    const hit = REFUSED_SPARK.find(([re]) => re.test(key.trim().toLowerCase()));
    return hit ? [{ key, why: hit[1] }] : [];
  });

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A Hadoop configuration file of these properties. */
export const configurationXml = (props: Record<string, string>): string =>
  '<?xml version="1.0"?>\n<configuration>\n' +
  Object.entries(props)
    .map(([k, v]) => `  <property><name>${esc(k)}</name><value>${esc(v)}</value></property>`)
    .join('\n') +
  '\n</configuration>\n';

/** Writes core-site.xml and yarn-site.xml (the same properties in both) into `dir`. */
export async function writeHadoopConfDir(dir: string, props: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const xml = configurationXml(props);
  await writeFile(path.join(dir, 'core-site.xml'), xml);
  await writeFile(path.join(dir, 'yarn-site.xml'), xml);
}
