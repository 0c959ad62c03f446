import {
  DescribeUserPoolClientCommand,
  ListUserPoolClientsCommand,
  type CognitoIdentityProviderClient,
} from '@aws-sdk/client-cognito-identity-provider';
import type { ClientCredentials } from './oidc-client';

/**
 * The app client of the stack's own Cognito user pool (docs/people.md): the pool's one client, its id
 * and secret read from Cognito at the first sign-in. The stack cannot hand them to the function: the
 * client names the function's URL as its callback, so the function cannot also name the client.
 */
export function cognitoAppClient(cognito: CognitoIdentityProviderClient, userPoolId: string) {
  return async (): Promise<ClientCredentials> => {
    const listed = await cognito.send(new ListUserPoolClientsCommand({ UserPoolId: userPoolId, MaxResults: 2 }));
    const clients = listed.UserPoolClients ?? [];
    if (clients.length !== 1 || !clients[0].ClientId)
      throw new Error(`The user pool ${userPoolId} has ${clients.length} app clients; sign-in expects exactly one`);
    const described = await cognito.send(
      new DescribeUserPoolClientCommand({ UserPoolId: userPoolId, ClientId: clients[0].ClientId }),
    );
    const secret = described.UserPoolClient?.ClientSecret;
    if (!secret) throw new Error(`The app client of ${userPoolId} has no secret`);
    return { clientId: clients[0].ClientId, clientSecret: secret };
  };
}
