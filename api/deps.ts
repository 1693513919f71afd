// What every route and service of the API is given: configuration and the clients it talks through.
// Kept apart from app.ts so that no feature module imports the application that mounts it.
import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';
import type { AuditWriter } from './audit/trail';
import type { Store } from '../lib/mongo';
import type { Authenticator } from './auth/authenticate';
import type { LaunchAtSubmit } from './jobs/launch-at-submit';
import type { SqlRuntime } from './sql/execute/runtime';
import type { Feeds } from './streams/feed';

export interface ApiDeps {
  config: Config;
  store: Store;
  temporal: Client;
  /** The change feeds the streams fan out (created with the app when not given). */
  feeds?: Feeds;
  /** Session pools and running engines of SQL statements (created with the app when not given). */
  sql?: SqlRuntime;
  /** Where the audit trail's records go, batched (created with the app when not given; flushed at close). */
  audit?: AuditWriter;
  /** Who is calling (API keys, OIDC tokens; created on first use when not given, api/auth/). */
  auth?: Authenticator;
  /** Launches single jobs' first drivers right after their workflows start (none when not given). */
  launches?: LaunchAtSubmit;
  /** Base URL of the REST API once it listens (http://host:port/api/v1): the Livy API's absolute links. */
  apiUrl?: string;
}
