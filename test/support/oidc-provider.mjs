// An OpenID Provider for tests: the certified oidc-provider library with users, passwords and a groups claim,
// in a process of its own because the library ships as ES modules only, which Jest's loader cannot load.
// Configuration comes as JSON in OIDC_PROVIDER_CONFIG:
//   { users: { <name>: { password, name, email, groups } },   // no groups: no groups claim at all
//     clients: [ <client metadata> ],
//     resource: { indicator, audience } }   // the API whose access tokens are JWTs for `audience`
// It listens on 127.0.0.1 on a free port (or config.port) and prints one JSON line, { "issuer": ... }, once it serves.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_PROVIDER_CONFIG ?? '{}');
const users = config.users ?? {};
const resource = config.resource;

const escape = (text) =>
  String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );

function loginPage(uid, clientId, error = '') {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
  <h1>Sign in to ${escape(clientId)}</h1>
  ${error ? `<p role="alert" id="error">${escape(error)}</p>` : ''}
  <form method="post" action="/interaction/${escape(uid)}">
    <label>User name <input id="username" name="username" autocomplete="username" autofocus></label>
    <label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
    <button id="sign-in" type="submit">Sign in</button>
  </form>
</body></html>`;
}

function readForm(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => resolve(new URLSearchParams(body)));
    req.on('error', reject);
  });
}

const claimsOf = (accountId) => {
  const user = users[accountId];
  return {
    sub: accountId,
    preferred_username: accountId,
    name: user.name ?? accountId,
    email: user.email ?? `${accountId}@example.org`,
    email_verified: true,
    ...(user.groups ? { groups: user.groups } : {}),
  };
};

// The issuer contains the port, so the provider is made once the server has one.
const server = createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  format: 'jwk',
});

const provider = new Provider(issuer, {
  clients: config.clients ?? [],
  jwks: { keys: [{ ...signingKey, kid: 'test-rs256', use: 'sig', alg: 'RS256' }] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: {
    openid: ['sub'],
    profile: ['preferred_username', 'name'],
    email: ['email', 'email_verified'],
    groups: ['groups'],
  },
  findAccount: (_ctx, id) =>
    users[id] ? { accountId: id, claims: () => claimsOf(id) } : undefined,
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    // Our own login page below checks passwords; the built-in one accepts any.
    devInteractions: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // Only on request: the gateway's tokens stay opaque ones for the userinfo endpoint.
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      getResourceServerInfo: (_ctx, indicator) => {
        if (!resource || indicator !== resource.indicator) throw new errors.InvalidTarget();
        return {
          scope: 'api',
          audience: resource.audience,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // What an API reads from a JWT access token: who the caller is and their groups.
  extraTokenClaims: (_ctx, token) => {
    if (token.kind !== 'AccessToken' || !token.resourceServer || !users[token.accountId])
      return undefined;
    const { preferred_username, email, groups } = claimsOf(token.accountId);
    return { preferred_username, email, groups };
  },
  ttl: { AccessToken: 300, IdToken: 300, Interaction: 300, Session: 3600, Grant: 3600 },
});

async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params } = details;
  if (prompt.name === 'login') {
    if (req.method !== 'POST') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(loginPage(uid, params.client_id));
      return;
    }
    const form = await readForm(req);
    const username = form.get('username') ?? '';
    const user = users[username];
    if (!user || user.password !== form.get('password')) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(loginPage(uid, params.client_id, 'Wrong user name or password.'));
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: username } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  if (prompt.name === 'consent') {
    // The clients are the company's own applications: consent is granted without asking, as a company's
    // identity provider is usually configured for them.
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    await provider.interactionFinished(
      req,
      res,
      { consent: { grantId: await grant.save() } },
      { mergeWithLastSubmission: true },
    );
    return;
  }
  res.writeHead(501, { 'Content-Type': 'text/plain' });
  res.end(`prompt ${prompt.name} is not implemented`);
}

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((error) => {
      process.stderr.write(`interaction failed: ${error.stack ?? error}\n`);
      if (!res.headersSent) res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end(String(error.message ?? error));
    });
    return;
  }
  callback(req, res);
});

provider.on('server_error', (_ctx, error) =>
  process.stderr.write(`server_error: ${error.stack ?? error}\n`),
);
process.stdout.write(`${JSON.stringify({ issuer })}\n`);
