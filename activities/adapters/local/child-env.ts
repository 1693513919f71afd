// The environment of every process the local adapter starts (drivers, group runners, SQL engines, pip): an
// allow-list of the worker's own environment, never all of it. The worker's environment holds the service's
// settings (SECRET_KEY, MONGO_URL, AUTH_ADMIN_KEY, OIDC_*, TEMPORAL_*, cloud credentials, tokens), and a job
// that prints os.environ would show them in its log. Each child adds what it needs explicitly (a runner its
// Temporal address and its own direct-channel secret, a driver SPARK_HOME and PYSPARK_PYTHON).

/** What a JVM, Spark's scripts and Python need from the host to run: the locale, paths, the user's home. */
const BASE_NAMES = new Set([
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'JAVA_HOME',
  'SPARK_HOME',
  'SPARK_CONF_DIR',
  'SPARK_LOCAL_DIRS',
  'HADOOP_CONF_DIR',
  'PYSPARK_PYTHON',
  'PYSPARK_DRIVER_PYTHON',
  // Paths of the host's CA bundle (file names, not secrets): TLS from Python behind a private CA.
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
]);
const BASE_PREFIXES = ['LC_'];

/**
 * pip also reads its own settings (PIP_INDEX_URL, PIP_CERT, PIP_FIND_LINKS: the operator's package sources)
 * and proxies to reach them. Only the pip process gets these, never a driver.
 */
const PIP_NAMES = new Set(['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']);
const PIP_PREFIXES = ['PIP_'];

export type ChildKind = 'driver' | 'pip';

const allowed = (name: string, kind: ChildKind): boolean =>
  BASE_NAMES.has(name) ||
  BASE_PREFIXES.some((p) => name.startsWith(p)) ||
  (kind === 'pip' && (PIP_NAMES.has(name) || PIP_PREFIXES.some((p) => name.startsWith(p))));

/**
 * The allow-listed part of `from` (the worker's environment), then `added` (what this child needs), which
 * wins. Nothing else of the worker's environment reaches the child.
 */
export function childEnv(
  kind: ChildKind,
  added: Record<string, string> = {},
  from: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) {
    if (value !== undefined && allowed(name, kind)) env[name] = value;
  }
  return { ...env, ...added };
}
