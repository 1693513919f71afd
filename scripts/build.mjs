// npm run build, after the type check (tsc -p tsconfig.build.json): the API, the worker and the dev-stack
// launcher as ESM JavaScript in dist/, and the Temporal workflow bundle beside the worker.
//
// Why esbuild and not tsc's own output: the sources import each other without file extensions (moduleResolution
// "Bundler"), which Node's ESM loader does not resolve; tsc would emit those imports unchanged. esbuild bundles
// each entry's own modules into one file and leaves every package import to Node (packages: 'external'), so no
// source file changes. The entries sit directly in dist/, one folder below the repository like the source
// folders, so the paths the code derives from its own location (the repository root in lib/config.ts, the
// workflows in worker/worker.ts) stay right.
import { bundleWorkflowCode } from '@temporalio/worker';
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { buildConsole } from './build-console.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const t0 = Date.now();

rmSync(DIST, { recursive: true, force: true });
mkdirSync(DIST, { recursive: true });
await build({
  absWorkingDir: ROOT,
  // connect-gateway: the Spark Connect gateway's thread, started by the API (api/connect/gateway-thread.ts).
  entryPoints: {
    api: 'api/main.ts',
    'connect-gateway': 'api/connect/gateway-thread.ts',
    worker: 'worker/main.ts',
    stack: 'scripts/stack.ts',
  },
  outdir: DIST,
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
});

// The worker loads this instead of bundling the workflows with webpack at every start.
const quiet = () => undefined;
const { code } = await bundleWorkflowCode({
  workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
  // As worker/worker.ts's WORKFLOW_INTERCEPTOR_MODULES: the SDK's OpenTelemetry interceptors for traced workflows.
  workflowInterceptorModules: [path.join(ROOT, 'workflows', 'trace-interceptors.ts')],
  logger: {
    log: quiet,
    trace: quiet,
    debug: quiet,
    info: quiet,
    warn: (m) => process.stderr.write(`${m}\n`),
    error: (m) => process.stderr.write(`${m}\n`),
  },
});
writeFileSync(path.join(DIST, 'workflow-bundle.js'), code);
// The web console's static files, served by the API at /console.
await buildConsole(path.join(DIST, 'console'));
process.stdout.write(
  `build: dist/{api,connect-gateway,worker,stack}.js, dist/workflow-bundle.js and dist/console/ in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
);
