import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  formatHuman,
  formatJson,
  isSecretKey,
  logger,
  redact,
  setLogFormat,
  setLogLevel,
  setLogSink,
} from '../../lib/log';
import { consoleSink } from '../setup-logs';

const T = new Date('2025-03-04T05:06:07.089Z');

/** Lines written to stdout and stderr while a test runs. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => (out.push(String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => (err.push(String(s)), true));
  return { out, err };
}

describe('JSON format', () => {
  it('has level, time, component, msg, then the ids in a fixed order, then the other fields', () => {
    const line = formatJson(T, 'info', 'k8s-adapter', 'driver pod created', {
      pod: 'p-driver',
      clusterName: 'prod',
      jobInstanceId: 'ji-1',
      scheduleId: 's-1',
      groupId: 'g-1',
      jobId: 'j-1',
    });
    const parsed = JSON.parse(line);
    expect(parsed).toEqual({
      time: '2025-03-04T05:06:07.089Z',
      level: 'info',
      component: 'k8s-adapter',
      msg: 'driver pod created',
      jobId: 'j-1',
      groupId: 'g-1',
      scheduleId: 's-1',
      jobInstanceId: 'ji-1',
      clusterName: 'prod',
      pod: 'p-driver',
    });
    expect(Object.keys(parsed)).toEqual([
      'time',
      'level',
      'component',
      'msg',
      'jobId',
      'groupId',
      'scheduleId',
      'jobInstanceId',
      'clusterName',
      'pod',
    ]);
    expect(line).not.toContain('\n');
  });

  it('never lets a field replace a core key', () => {
    const parsed = JSON.parse(formatJson(T, 'warn', 'api', 'real message', { msg: 'fake', level: 'debug', time: 0 }));
    expect(parsed.msg).toBe('real message');
    expect(parsed.level).toBe('warn');
    expect(parsed.time).toBe('2025-03-04T05:06:07.089Z');
    expect(parsed['field.msg']).toBe('fake');
    expect(parsed['field.level']).toBe('debug');
  });

  it('writes errors as name, message and stack, and values JSON cannot hold as strings', () => {
    const e = Object.assign(new Error('boom', { cause: new TypeError('inner') }), { code: 'E42' });
    const parsed = JSON.parse(formatJson(T, 'error', 'worker', 'failed', { err: e, n: 10n, when: T }));
    expect(parsed.err.name).toBe('Error');
    expect(parsed.err.message).toBe('boom');
    expect(parsed.err.code).toBe('E42');
    expect(parsed.err.stack).toContain('boom');
    expect(parsed.err.cause.message).toBe('inner');
    expect(parsed.n).toBe('10');
    expect(parsed.when).toBe('2025-03-04T05:06:07.089Z');
  });
});

describe('human format', () => {
  it('reads as time LEVEL [component] msg key=value, ids first', () => {
    const line = formatHuman(T, 'info', 'api', 'listening', { port: 9888, docs: '/api/v1/openapi.json', jobId: 'j-1' });
    expect(line).toBe('2025-03-04T05:06:07.089Z INFO  [api] listening jobId=j-1 port=9888 docs=/api/v1/openapi.json');
  });

  it('quotes values with spaces and writes objects as JSON', () => {
    const line = formatHuman(T, 'warn', 'streams', 'change stream failed', {
      err: 'socket hang up',
      where: { collection: 'jobs' },
    });
    expect(line).toBe(
      '2025-03-04T05:06:07.089Z WARN  [streams] change stream failed err="socket hang up" where={"collection":"jobs"}',
    );
  });

  it('puts an error message on the line and its stack indented below', () => {
    const e = new Error('no route to host');
    const [first, ...rest] = formatHuman(T, 'error', 'worker', 'worker failed', { err: e }).split('\n');
    expect(first).toBe('2025-03-04T05:06:07.089Z ERROR [worker] worker failed err="no route to host"');
    expect(rest[0]).toBe('    Error: no route to host');
    expect(rest.length).toBeGreaterThan(1);
    expect(rest.every((l) => l.startsWith('    '))).toBe(true);
  });
});

describe('redaction', () => {
  it('recognises secret-bearing keys in any spelling', () => {
    for (const k of [
      'password',
      'PASSWORD',
      'secret',
      'SECRET_KEY',
      'secretKey',
      'token',
      'bearerToken',
      'key',
      'clientKey',
      'client-key',
      'clientKeyPassphrase',
      'passphrase',
      'accessKey',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'authorization',
      'caCert',
    ]) {
      expect(isSecretKey(k), k).toBe(true);
    }
    for (const k of ['jobId', 'groupId', 'clusterName', 'url', 'namespace', 'keys', 'monkeys', 'pod', 'SPARK_HOME']) {
      expect(isSecretKey(k), k).toBe(false);
    }
  });

  it('replaces secrets at any depth, inside arrays, maps and errors, and keeps the rest', () => {
    const cluster = {
      name: 'prod',
      clientKey: '-----BEGIN PRIVATE KEY-----abc',
      storages: { s3: { sparkBucket: 'spark', accessKey: 'AKIA123', secretKey: 'shh-s3' } },
      users: [{ name: 'u', password: 'pw-in-array' }],
      env: new Map([['AWS_SECRET_ACCESS_KEY', 'shh-env']]),
    };
    const err = Object.assign(new Error('bad'), { request: { headers: { authorization: 'Bearer tok-123' } } });
    const out = JSON.stringify(redact({ cluster, err }));
    for (const secret of ['BEGIN PRIVATE KEY', 'AKIA123', 'shh-s3', 'pw-in-array', 'shh-env', 'tok-123'])
      expect(out).not.toContain(secret);
    expect(out).toContain('"sparkBucket":"spark"');
    expect(out).toContain('"name":"prod"');
    expect((redact(cluster) as any).storages.s3.accessKey).toBe('***');
  });

  it('masks passwords inside URLs in any string, also in messages and stacks', () => {
    const url = 'mongodb://app:hunter2@mongo-0.mongo:27017/?replicaSet=rs0';
    expect(redact({ note: `connecting to ${url}` })).toEqual({
      note: 'connecting to mongodb://app:***@mongo-0.mongo:27017/?replicaSet=rs0',
    });
    const line = formatJson(T, 'error', 'api', `cannot reach ${url}`, {
      err: new Error(`server selection failed for ${url}`),
    });
    expect(line).not.toContain('hunter2');
    expect(formatHuman(T, 'error', 'api', `cannot reach ${url}`, { err: new Error(url) })).not.toContain('hunter2');
  });

  it('survives cycles and very deep objects without printing what lies past the cut', () => {
    const a: any = { name: 'a' };
    a.self = a;
    let deep: any = { password: 'deep-pw' };
    for (let i = 0; i < 20; i++) deep = { next: deep };
    const out = JSON.stringify(redact({ a, deep }));
    expect(out).toContain('[circular]');
    expect(out).toContain('[too deep]');
    expect(out).not.toContain('deep-pw');
  });

  it('does not change the object it was given', () => {
    const f = { password: 'p', nested: { token: 't' } };
    redact(f);
    expect(f).toEqual({ password: 'p', nested: { token: 't' } });
  });
});

describe('logger', () => {
  let lines: ReturnType<typeof capture>;
  beforeEach(() => {
    // What the service writes itself (the test setup routes lines through the console instead).
    setLogSink(undefined);
    lines = capture();
    setLogLevel('info');
  });
  afterEach(() => {
    setLogSink(consoleSink);
    vi.restoreAllMocks();
    setLogLevel('info');
    setLogFormat('human');
  });

  it('writes JSON lines when the format is json: info to stdout, warn and error to stderr', () => {
    setLogFormat('json');
    const log = logger('worker');
    log.info('polling', { taskQueue: 'q', jobId: 'j-9' });
    log.warn('slow', { ms: 1200 });
    log.error('failed', { err: new Error('x'), secretKey: 'k' });
    expect(lines.out).toHaveLength(1);
    expect(lines.err).toHaveLength(2);
    const info = JSON.parse(lines.out[0]);
    expect(info).toMatchObject({ level: 'info', component: 'worker', msg: 'polling', jobId: 'j-9', taskQueue: 'q' });
    expect(Date.parse(info.time)).not.toBeNaN();
    expect(lines.out[0].endsWith('}\n')).toBe(true);
    const error = JSON.parse(lines.err[1]);
    expect(error.secretKey).toBe('***');
    expect(error.err.message).toBe('x');
  });

  it('writes human lines by default and drops lines below the level', () => {
    const log = logger('api');
    log.debug('hidden');
    log.info('shown', { clusterName: 'default' });
    expect(lines.out).toHaveLength(1);
    expect(lines.out[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {2}\[api\] shown clusterName=default\n$/);
    setLogLevel('debug');
    log.debug('now shown');
    expect(lines.out).toHaveLength(2);
  });

  it('never throws, whatever the fields hold', () => {
    setLogFormat('json');
    const hostile = {
      get boom(): string {
        throw new Error('getter');
      },
    };
    expect(() => logger('x').info('still logged', { hostile })).not.toThrow();
    expect(JSON.parse(lines.out[0]).msg).toBe('still logged');
  });
});
