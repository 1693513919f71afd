// Builds the web console (console/) into static files: index.html, app-<hash>.js and app-<hash>.css. No CDN,
// no runtime downloads: Preact, socket.io-client and the console's own code are bundled into one script by
// esbuild. `npm run build` writes dist/console, which the API serves at /console (api/console.ts); the test
// suite builds its own copy (test/global-setup.ts). Run alone: `node scripts/build-console.mjs [outdir]`.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles the console into `outdir` (replaced whole); returns the file names written. */
export async function buildConsole(outdir = path.join(ROOT, 'dist', 'console')) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: 'console/src/main.tsx' },
    bundle: true,
    write: false,
    outdir,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const names = {};
  for (const f of result.outputFiles) {
    const ext = path.extname(f.path);
    if (ext === '.map') continue;
    const hash = createHash('sha256').update(f.contents).digest('hex').slice(0, 10);
    const name = `app-${hash}${ext}`;
    names[ext] = name;
    // The source map keeps its plain name; the bundle's last line points at it.
    let contents = Buffer.from(f.contents);
    const map = result.outputFiles.find((m) => m.path === `${f.path}.map`);
    if (map) {
      writeFileSync(path.join(outdir, `${name}.map`), map.contents);
      contents = Buffer.from(
        contents.toString('utf8').replace(/sourceMappingURL=app\.(js|css)\.map/, `sourceMappingURL=${name}.map`),
      );
    }
    writeFileSync(path.join(outdir, name), contents);
  }
  const html = readFileSync(path.join(ROOT, 'console', 'index.html'), 'utf8')
    .replace('%APP_JS%', names['.js'])
    .replace('%APP_CSS%', names['.css'] ?? '');
  writeFileSync(path.join(outdir, 'index.html'), html);
  return Object.values(names);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const t0 = Date.now();
  const out = process.argv[2] ? path.resolve(process.argv[2]) : undefined;
  const files = await buildConsole(out);
  process.stdout.write(`build: console (${files.join(', ')}) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}
