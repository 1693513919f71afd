import type { Artifacts } from './types';

const base = (p: string) => p.slice(p.lastIndexOf('/') + 1);

/** Adds newly uploaded files; each replaces a file of the same name and kind. */
export function mergeArtifacts(a: Artifacts, b: Artifacts): Artifacts {
  const merge = (x: string[], y: string[]) => [...x.filter((p) => !y.some((q) => base(q) === base(p))), ...y];
  return { jars: merge(a.jars, b.jars), files: merge(a.files, b.files), pyFiles: merge(a.pyFiles, b.pyFiles) };
}
