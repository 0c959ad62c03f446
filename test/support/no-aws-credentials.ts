import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A server environment in which the AWS SDK's credential chain finds nothing, as on a newcomer's
 * machine with no AWS setup: no credential variables or profile, empty config and credentials
 * files, and no instance metadata (whose lookup would otherwise wait on a network timeout).
 */
export function noAwsCredentialsEnv(): Record<string, string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'no-aws-'));
  const empty = (name: string) => {
    const path = join(dir, name);
    writeFileSync(path, '');
    return path;
  };
  return {
    AWS_ACCESS_KEY_ID: undefined,
    AWS_SECRET_ACCESS_KEY: undefined,
    AWS_SESSION_TOKEN: undefined,
    AWS_PROFILE: undefined,
    AWS_DEFAULT_PROFILE: undefined,
    AWS_ROLE_ARN: undefined,
    AWS_WEB_IDENTITY_TOKEN_FILE: undefined,
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined,
    AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined,
    AWS_LAMBDA_FUNCTION_NAME: undefined,
    AWS_CONFIG_FILE: empty('config'),
    AWS_SHARED_CREDENTIALS_FILE: empty('credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}
