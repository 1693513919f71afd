// Serves the web console (console/, built by scripts/build-console.mjs into CONSOLE_DIR) on the API's own port:
// `/` and `/console` redirect to `/console/`, which answers index.html; the hashed bundles under /console/ are
// cached for a year, index.html never. The files carry no data: every page reads the public REST API and the
// streams with the signed-in user's credentials, so these paths need no authentication.
import type { Middleware } from 'koa';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export const CONSOLE_PREFIX = '/console';

/** `connectOrigins`: origins the console's scripts may call besides its own (the OIDC issuer of its sign-in). */
export function consoleAssets(dir: string, connectOrigins: string[] = []): Middleware {
  const root = path.resolve(dir);
  // 'self' covers the console's own REST calls and its Socket.IO websocket (ws/wss of the same host); no
  // scheme-wide source: an injected script could otherwise send what it reads to any https or wss host.
  const connect = ["'self'", ...connectOrigins].join(' ');
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/' || ctx.path === CONSOLE_PREFIX) {
      ctx.redirect(`${CONSOLE_PREFIX}/`);
      return;
    }
    if (!ctx.path.startsWith(`${CONSOLE_PREFIX}/`)) return next();
    const rel = ctx.path.slice(CONSOLE_PREFIX.length + 1) || 'index.html';
    const file = path.resolve(root, rel);
    // Only files directly in the console's folder: no `..`, no sub-folders.
    const inside = path.dirname(file) === root;
    if (!existsSync(path.join(root, 'index.html'))) {
      ctx.status = 404;
      ctx.body = { message: `the web console is not built: run npm run build (looked in ${root})` };
      return;
    }
    if (!inside || !existsSync(file) || !statSync(file).isFile()) {
      ctx.status = 404;
      ctx.body = { message: `no such file of the web console: ${ctx.path}` };
      return;
    }
    const ext = path.extname(file);
    ctx.type = TYPES[ext] ?? 'application/octet-stream';
    ctx.set('Cache-Control', rel === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (rel === 'index.html') {
      ctx.set(
        'Content-Security-Policy',
        `default-src 'self'; connect-src ${connect}; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'`,
      );
    }
    ctx.body = readFileSync(file);
  };
}
