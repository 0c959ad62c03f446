import { awsAdapters } from '../wiring/aws-adapters';
import { loadConfig } from '../wiring/config';
import { buildDeps } from '../wiring/deps';
import { jsonLogger } from '../base/logger';
import { createProxyHandler } from '../wiring/proxy-handler';

/*
 * The Lambda entry: the runtime loads this module once per instance, so the clients are built
 * here, during the init phase, and reused by every invocation.
 */
const deps = buildDeps(loadConfig(), jsonLogger, { aws: awsAdapters });
// Read the admin secret during cold start rather than on the first admin request.
void deps.adminKey().catch(() => undefined);

export const handler = createProxyHandler(deps);
