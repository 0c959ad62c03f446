import type { App } from 'aws-cdk-lib';
import { stackName } from './names';
import { ProxyStack } from './proxy-stack';
import { readSettings } from './settings';

/** Reads the context switches and adds the stage's stack; shared by bin/app.ts and the tests. */
export function addProxyStack(app: App, projectRoot: string): ProxyStack {
  const settings = readSettings(app.node);
  return new ProxyStack(app, stackName(settings.stage), {
    settings,
    projectRoot,
    // The account comes from the caller's credentials at deploy time; synth needs none.
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: settings.region },
    description: `Usage-tracking AI provider proxy (stage ${settings.stage})`,
    tags: { project: 'ai-usage-proxy', stage: settings.stage },
  });
}
