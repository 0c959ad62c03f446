#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addProxyStack } from '../lib/proxy-app';

const app = new App();
addProxyStack(app, fileURLToPath(new URL('..', import.meta.url)));

// cdk-nag runs on every synth and deploy: an unacknowledged finding stops both.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
