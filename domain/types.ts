// Types shared by every layer. The resource shapes are inferred from their schemas in resources.ts and
// re-exported here type-only, so workflows can import them without pulling zod into their bundle.
import type { MemorySettings } from './resources';
import type { Language } from './states';

export type {
  Cluster,
  Group,
  Job,
  JobInstanceResult,
  JobLogEntry,
  MemorySettings,
  Schedule,
  Storage,
} from './resources';

/** Files uploaded with a job, group or schedule, as paths in the artifact store. */
export interface Artifacts {
  jars: string[];
  files: string[];
  pyFiles: string[];
}

/**
 * Everything needed to launch a Spark application or an interactive driver: the desired spec.
 * Carried by workflows; the adapters turn it into a process or a pod.
 */
export interface SparkSpec {
  name: string;
  language: Language;
  clusterName: string;
  /** SCALA: main class inside the jars; PYTHON: module (file name among pyFiles) that is the main program. */
  jobClass?: string;
  args: string[];
  jobConfig: Record<string, string>;
  pyRequirements: string[];
  packages: string[];
  memorySettings: MemorySettings;
  artifacts: Artifacts;
  tags: Record<string, string>;
}
