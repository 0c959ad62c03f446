import type * as OpenIdClient from 'openid-client';

/** Loaded at the first sign-in, so an instance that never signs anyone in never evaluates it. */
const openIdClient = () => import('openid-client');

/** The proxy's client at the issuer: its id and secret. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** What the sign-in keeps between sending the person to the issuer and their return: the PKCE verifier, state and nonce. */
export interface PendingSignIn {
  verifier: string;
  state: string;
  nonce: string;
}

/** The person the issuer vouched for: its subject, a name to show, and the groups its claim lists. */
export interface SignedInPerson {
  subject: string;
  name?: string;
  groups: string[];
}

/** Scopes asked for: the person's id, e-mail and name; `groups` where the issuer offers it. */
const BASE_SCOPES = ['openid', 'email', 'profile'];

/**
 * The relying party of OpenID Connect's authorization code flow with PKCE (S256), over the
 * maintained `openid-client`: discovery, the authorization URL, the code exchange with the client
 * secret, and the ID token's checks (issuer, audience, signature, expiry, nonce). The issuer's
 * metadata is read once per instance, at the first sign-in.
 */
export class OidcClient {
  private configuration?: Promise<OpenIdClient.Configuration>;

  constructor(
    private readonly settings: { issuer: string; groupsClaim: string },
    /** Read at the first sign-in (from Secrets Manager or Cognito in AWS) and kept with the metadata. */
    private readonly client: () => Promise<ClientCredentials>,
  ) {}

  private configured(): Promise<OpenIdClient.Configuration> {
    this.configuration ??= (async () => {
      const oidc = await openIdClient();
      const { clientId, clientSecret } = await this.client();
      const issuer = new URL(this.settings.issuer);
      // Plain HTTP only for an issuer on this machine (a local one for trying sign-in out).
      const local = issuer.protocol === 'http:' && /^(127\.0\.0\.1|localhost|\[::1\])$/.test(issuer.hostname);
      return oidc.discovery(issuer, clientId, clientSecret, undefined, {
        execute: local ? [oidc.allowInsecureRequests] : [],
      });
    })().catch((error: unknown) => {
      // A failed discovery is tried again at the next sign-in rather than kept.
      this.configuration = undefined;
      throw error;
    });
    return this.configuration;
  }

  /** Where to send the person, and what to keep (sealed, in a cookie) until they return. */
  async start(redirectUri: string): Promise<{ location: string; pending: PendingSignIn }> {
    const [oidc, config] = await Promise.all([openIdClient(), this.configured()]);
    const pending = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
    const offered = config.serverMetadata().scopes_supported;
    const scopes = [...BASE_SCOPES, ...(offered?.includes('groups') ? ['groups'] : [])];
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: scopes.join(' '),
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { location: url.href, pending };
  }

  /** Exchanges the code the issuer sent back for the person's verified identity and groups. */
  async finish(callbackUrl: URL, pending: PendingSignIn): Promise<SignedInPerson> {
    const [oidc, config] = await Promise.all([openIdClient(), this.configured()]);
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (!claims) throw new Error('The issuer sent no ID token');
    // Some issuers put groups in the ID token (Cognito), others only at the userinfo endpoint.
    const userinfo = config.serverMetadata().userinfo_endpoint
      ? await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
      : {};
    const all: Record<string, unknown> = { ...userinfo, ...claims };
    const groups = all[this.settings.groupsClaim];
    const name = [all.email, all.name, all.preferred_username].find((v): v is string => typeof v === 'string');
    return {
      subject: claims.sub,
      name,
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
    };
  }
}
