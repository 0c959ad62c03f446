import { Duration, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  CfnUserPoolGroup,
  Mfa,
  OAuthScope,
  UserPool,
  UserPoolClientIdentityProvider,
  type UserPoolClient,
} from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

/** The groups the pool starts with, each mapped to a role in an account by an admin (docs/people.md). */
export const SIGN_IN_GROUPS = ['proxy-admins', 'proxy-members', 'proxy-viewers'] as const;

/**
 * `-c cognitoSignIn=true`: a Cognito user pool for signing in to the dashboard (docs/people.md), with
 * its hosted login page, one app client (authorization code with PKCE, a client secret) whose callback
 * is the function URL's, and three groups. People are added by an operator; nobody signs up alone.
 */
export class SignInPool extends Construct {
  readonly pool: UserPool;
  readonly client: UserPoolClient;

  constructor(scope: Construct, id: string, props: { namePrefix: string; functionUrl: string }) {
    super(scope, id);
    this.pool = new UserPool(this, 'Pool', {
      userPoolName: `${props.namePrefix}people`,
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      passwordPolicy: {
        minLength: 14,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
      },
      // Whoever signs in may change provider keys and budgets: a second factor, always.
      mfa: Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      // The people of a team, like its accounts and keys, survive `cdk destroy`.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    Validations.of(this.pool).acknowledge({
      id: 'AwsSolutions-COG8',
      reason:
        "The Plus feature plan (Cognito's threat protection) is billed per person each month; this pool already requires a second factor, lets nobody sign up alone and holds a team's few people, and an operator can move it to Plus in the console without a redeploy.",
    });
    this.pool.addDomain('Domain', {
      cognitoDomain: { domainPrefix: `${props.namePrefix}${Stack.of(this).account}` },
    });
    this.client = this.pool.addClient('Dashboard', {
      generateSecret: true,
      authFlows: {},
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [OAuthScope.OPENID, OAuthScope.EMAIL, OAuthScope.PROFILE],
        // The URL ends with "/".
        callbackUrls: [Fn.join('', [props.functionUrl, 'api/auth/callback'])],
      },
      supportedIdentityProviders: [UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
    });
    for (const group of SIGN_IN_GROUPS)
      new CfnUserPoolGroup(this, group, { userPoolId: this.pool.userPoolId, groupName: group });
  }
}
