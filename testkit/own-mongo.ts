// A MongoDB-protocol dev server of a test's or a bench's own (scripts/mongo/Launcher.java, persistent, in its own
// process and data folder), for what measures or tests the server itself: change streams, its data file and its
// format, bench:store. It can be killed (-9) and started again on the same file, with extra launcher environment
// for a start.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { MongoClient } from 'mongodb';
import { ROOT } from '../lib/config';
import { localMongoUrl, MONGO_READY, serverCommands, startLogged, waitForOutput } from '../scripts/services';
import { freePort } from './servers';

export interface OwnMongoOptions {
  /** Launcher environment for every start (OPLOG_MAX_ENTRIES, MVSTORE_*). */
  env?: Record<string, string>;
  /** A data file to start from (gzipped if it ends in .gz), copied in as the server's mongo.mv. */
  dataFile?: string;
  /** Another Launcher.java to run (the fixture recorder runs an older one). */
  launcher?: string;
}

export type OwnMongo = Awaited<ReturnType<typeof ownMongo>>;

/** Starts the server; `cleanups` gets its removal (client, process, folder). */
export async function ownMongo(cleanups: (() => Promise<void>)[], options: OwnMongoOptions = {}) {
  const stackDir = process.env.STACK_DIR ?? path.join(ROOT, '.stack');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'own-mongo-'));
  const file = path.join(dir, 'mongo.mv');
  if (options.dataFile) {
    const bytes = readFileSync(options.dataFile);
    writeFileSync(file, options.dataFile.endsWith('.gz') ? gunzipSync(bytes) : bytes);
  }
  const port = await freePort();
  const cmd = serverCommands({
    stackDir,
    dataDir: dir,
    logDir: dir,
    persistent: true,
    temporalPort: 0,
    temporalUiPort: 0,
    mongoPort: port,
  }).mongo;
  const args = options.launcher ? cmd.args.map((a) => (a.endsWith('Launcher.java') ? options.launcher! : a)) : cmd.args;
  let proc: ChildProcess | undefined;
  /** Starts the server (again) on the same file, with `env` beside the options' for this start. */
  const start = async (env: Record<string, string> = {}) => {
    const saved = { ...process.env };
    Object.assign(process.env, options.env, env);
    proc = startLogged(cmd.cmd, args, path.join(dir, 'mongo.log'));
    process.env = saved;
    await waitForOutput(proc, MONGO_READY(port), 60_000, 'mongo-java-server');
  };
  const stop = async (signal: NodeJS.Signals) => {
    if (!proc || proc.exitCode !== null) return;
    const gone = new Promise((r) => proc!.once('exit', r));
    proc.kill(signal);
    await gone;
  };
  await start();
  const url = localMongoUrl(port);
  const client = await MongoClient.connect(url, { serverSelectionTimeoutMS: 30_000 });
  cleanups.push(async () => {
    await client.close().catch(() => undefined);
    await stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    client,
    start,
    /** kill -9: what it acknowledged must be in the file. */
    kill: () => stop('SIGKILL'),
    /** A clean shutdown (the launcher's hook closes the store). */
    stop: () => stop('SIGTERM'),
    url,
    dir,
    file,
    log: path.join(dir, 'mongo.log'),
  };
}
