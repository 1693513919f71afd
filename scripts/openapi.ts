// Prints the OpenAPI document the API serves at /api/v1/openapi.json, built from the route table without
// connecting to anything: `npx tsx scripts/openapi.ts > openapi.json`. Useful to diff the document
// before and after a change to the routes.
import type { Client } from '@temporalio/client';
import { allRoutes } from '../api/app';
import { withSecurity } from '../api/auth/openapi';
import { openApiDocument } from '../api/routing';
import { loadConfig } from '../lib/config';
import type { Store } from '../lib/mongo';

// The route table only names collections when it is built; nothing is read or written here.
const store = { col: () => ({}) } as unknown as Store;
const config = loadConfig({ ...process.env, SECRET_KEY: process.env.SECRET_KEY ?? '0'.repeat(64) });
const routes = allRoutes({ config, store, temporal: {} as Client });
process.stdout.write(`${JSON.stringify(withSecurity(openApiDocument(routes), routes), null, 2)}\n`);
