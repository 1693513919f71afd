// Self time of a V8 .cpuprofile (bench:sql's BENCH_CPU_PROFILE, node --cpu-prof, the inspector), by module and
// by function, as a share of the samples and in ms:
//
//   npx tsx bench/cpuprofile-summary.ts <file.cpuprofile> [top functions (40)] [top modules (30)]
//
// A module is a package under node_modules (its name), a file of this repository (its path), a Node built-in
// (node:<name>), or V8's own entries: (garbage collector), (program) (native code outside JS: libuv, the
// parser, syscalls), (idle).
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topF = '40', topM = '30'] = process.argv.slice(2);
if (!file) throw new Error('usage: cpuprofile-summary.ts <file.cpuprofile> [top functions] [top modules]');
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));

function moduleOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return url;
  const m = /\/work\/main\/(.*)$/.exec(url);
  return m ? m[1] : url;
}

// Self time of a sample is the delta to the next one (V8's convention: timeDeltas[i] precedes samples[i]).
const selfUs = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i + 1] ?? 0;
  selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + dt);
}
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idle = [...selfUs]
  .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
  .reduce((a, [, v]) => a + v, 0);

const fns = new Map<string, number>();
const mods = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const mod = moduleOf(url, functionName);
  const key = `${functionName || '(anonymous)'}  ${mod}${url ? `:${lineNumber + 1}` : ''}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  mods.set(mod, (mods.get(mod) ?? 0) + us);
}

const busy = total - idle;
console.log(
  `${file}: ${(total / 1000).toFixed(0)} ms profiled, ${(busy / 1000).toFixed(0)} ms not idle (shares below are of that)`,
);
const print = (title: string, m: Map<string, number>, n: number) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, n))
    console.log(`${((100 * us) / busy).toFixed(1).padStart(6)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
};
// Each sample charged to the innermost function of this repository on its (synchronous) stack: where the
// time spent in packages and built-ins was asked for. Work resumed after an await has only its own frames.
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const isRepo = (url: string) => url.includes('/work/main/') && !url.includes('/node_modules/');
const callers = new Map<string, number>();
for (const [id, us] of selfUs) {
  let n: number | undefined = id;
  while (n !== undefined && !isRepo(byId.get(n)!.callFrame.url)) n = parent.get(n);
  const self = byId.get(id)!.callFrame;
  let key: string;
  if (n === undefined) key = `(no repository frame) ${moduleOf(self.url, self.functionName)}`;
  else {
    const f = byId.get(n)!.callFrame;
    key = `${f.functionName || '(anonymous)'}  ${moduleOf(f.url, f.functionName)}:${f.lineNumber + 1}`;
  }
  if (self.functionName !== '(idle)') callers.set(key, (callers.get(key) ?? 0) + us);
}

print('self time by module', mods, Number(topM));
print('self time by function', fns, Number(topF));
print('time by the innermost function of this repository on the stack', callers, Number(topF));
