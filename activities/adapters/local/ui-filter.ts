// The Host check of every Spark UI the service starts on this host (scripts/spark-ui-filter/): a servlet filter
// compiled once per source version into STACK_DIR/jvm/ui-filter-<hash>/ with the JDK's javac against pyspark's
// servlet API, and the Spark properties that put it in front of a UI.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../../../lib/config';
import { logger } from '../../../lib/log';

export const UI_FILTER_CLASS = 'sparkorchestrator.LoopbackHostFilter';
const SOURCE = path.join(ROOT, 'scripts', 'spark-ui-filter', 'LoopbackHostFilter.java');

const log = logger('spark-ui');
const compiled = new Map<string, Promise<string | undefined>>();

/**
 * The folder of the compiled filter class; undefined (with a warning, once) where it cannot be made: no
 * javac, no source. Concurrent callers of several processes each compile into a folder of their own and
 * rename it into place; the first rename wins.
 */
export function uiFilterClasses(sparkHome: string, stackDir: string): Promise<string | undefined> {
  const key = `${sparkHome}\n${stackDir}`;
  let p = compiled.get(key);
  if (!p) {
    p = compile(sparkHome, stackDir).catch((e: Error) => {
      log.warn('Spark UIs run without their Host check: the filter could not be compiled', { error: e.message });
      return undefined;
    });
    compiled.set(key, p);
  }
  return p;
}

async function compile(sparkHome: string, stackDir: string): Promise<string> {
  const source = await fs.readFile(SOURCE);
  const dir = path.resolve(
    stackDir,
    'jvm',
    `ui-filter-${createHash('sha256').update(source).digest('hex').slice(0, 16)}`,
  );
  if (existsSync(path.join(dir, 'sparkorchestrator', 'LoopbackHostFilter.class'))) return dir;
  const jars = path.join(sparkHome, 'jars');
  const servletApi = readdirSync(jars).find((f) => /^(jakarta|javax)\.servlet-api-.*\.jar$/.test(f));
  if (!servletApi) throw new Error(`no servlet API jar in ${jars}`);
  const tmp = `${dir}.${process.pid}.${Date.now()}.tmp`;
  await fs.mkdir(tmp, { recursive: true });
  try {
    await promisify(execFile)('javac', [
      '--release',
      '8',
      '-nowarn',
      '-cp',
      path.join(jars, servletApi),
      '-d',
      tmp,
      SOURCE,
    ]);
    await fs.rename(tmp, dir).catch((e: NodeJS.ErrnoException) => {
      if (!existsSync(dir)) throw e;
    });
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Appends to a classpath or list property the job may have set itself. */
const append = (current: string | undefined, value: string, sep: string) =>
  current ? `${current}${sep}${value}` : value;

/** The properties that put the filter (class folder `classes`) in front of a UI, after what `conf` has. */
export function uiFilterConf(conf: Record<string, string>, classes: string): Record<string, string> {
  return {
    'spark.ui.filters': append(conf['spark.ui.filters'], UI_FILTER_CLASS, ','),
    'spark.driver.extraClassPath': append(conf['spark.driver.extraClassPath'], classes, ':'),
  };
}
