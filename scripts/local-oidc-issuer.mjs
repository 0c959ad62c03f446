// A real OpenID Connect issuer on this machine, for trying the dashboard's sign-in on `npm start`
// and for the tests (docs/people.md). It is the maintained `oidc-provider` with its own development
// login page: any password is accepted, and the login name picks the person and their groups.
//
//   node scripts/local-oidc-issuer.mjs
//
// Settings (environment): ISSUER_PORT (9090; 0 picks a free one), ISSUER_REDIRECT_URI (the proxy's
// callback, http://127.0.0.1:8787/api/auth/callback), ISSUER_CLIENT_ID and ISSUER_CLIENT_SECRET
// (local-proxy and local-proxy-secret), ISSUER_PEOPLE (JSON: login -> groups; three people by default).
// It prints one line, `issuer listening on <url>`, when it is ready.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const port = Number(process.env.ISSUER_PORT ?? 9090);
const redirectUri = process.env.ISSUER_REDIRECT_URI ?? 'http://127.0.0.1:8787/api/auth/callback';
const clientId = process.env.ISSUER_CLIENT_ID ?? 'local-proxy';
const clientSecret = process.env.ISSUER_CLIENT_SECRET ?? 'local-proxy-secret';
/** @type {Record<string, string[]>} */
const people = JSON.parse(
  process.env.ISSUER_PEOPLE ??
    JSON.stringify({ alice: ['proxy-admins'], bob: ['proxy-members'], carol: ['proxy-viewers'] }),
);

function start(url) {
  const provider = new Provider(url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email'], profile: ['name'], groups: ['groups'] },
    // The person's e-mail, name and groups in the ID token too, as Cognito puts its groups there.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: `${id}@example.test`, name: id, groups: people[id] ?? [] }),
      };
    },
    // The proxy is a first-party client: the person is not asked to consent to it after signing in.
    async loadExistingGrant(ctx) {
      const found = ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (found) return ctx.oidc.provider.Grant.find(found);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
  });
  return provider;
}

// The issuer's URL names its port: the server listens first (on a free port when 0 is asked for),
// and hands its requests to the issuer built for that URL.
let handle;
const server = createServer((request, response) => handle(request, response));
await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;
handle = start(url).callback();
console.log(`issuer listening on ${url}`);
