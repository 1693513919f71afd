// One small structured logger. Values under secret-bearing keys are never printed.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

const SECRET_KEYS = /^(clientKey|clientKeyPassphrase|password|secretKey|accessKey|caCert|clientCert|token|authorization)$/i;

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, SECRET_KEYS.test(k) ? '***' : redact(v, depth + 1)]),
  );
}

let threshold: number = LEVELS[(process.env.LOG_LEVEL as Level) ?? 'info'] ?? LEVELS.info;
export const setLogLevel = (l: Level): void => {
  threshold = LEVELS[l];
};

function emit(level: Level, component: string, msg: string, fields?: Record<string, unknown>): void {
  if (LEVELS[level] < threshold) return;
  const line = JSON.stringify({ t: new Date().toISOString(), level, component, msg, ...(redact(fields ?? {}) as object) });
  (level === 'error' || level === 'warn' ? process.stderr : process.stdout).write(line + '\n');
}

export const logger = (component: string) => ({
  debug: (msg: string, f?: Record<string, unknown>) => emit('debug', component, msg, f),
  info: (msg: string, f?: Record<string, unknown>) => emit('info', component, msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => emit('warn', component, msg, f),
  error: (msg: string, f?: Record<string, unknown>) => emit('error', component, msg, f),
});
