// A real OpenID Connect issuer (node-oidc-provider) for the tests and for trying the
// service's bearer tokens by hand: it issues client-credentials access tokens as signed JWTs,
// publishes its keys at /jwks and describes itself at /.well-known/openid-configuration.
//
//   node ops/oidc/issuer.mjs CONFIG.json
//
// CONFIG: {"issuer": "http://127.0.0.1:PORT", "port": PORT, "audience": "...",
//          "accessTokenTTL": 300, "keys": [private JWKs, the first signs],
//          "clients": [{"client_id", "client_secret", "scope", "claims": {...}}]}
// Each client's "claims" are added to its tokens (the tenant, the roles). A client with
// "redirect_uris" signs people in instead (authorization code with PKCE, a public client, as
// the console is): the issuer's development login page takes any name, the grant is given
// without a consent page, and the tokens carry the claims of that name in "accounts". Its JWKS lists every
// key of "keys", so a restart with a new key first and the old one after is a key rotation:
// new tokens carry the new kid, tokens already issued still verify. Listens on loopback only.
import { readFileSync } from "node:fs";
import Provider from "oidc-provider";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const byClient = new Map(config.clients.map((c) => [c.client_id, c.claims ?? {}]));
const scopes = [
  ...new Set(config.clients.flatMap((c) => c.scope.split(" ")).filter((s) => s !== "openid")),
];

const signsIn = (c) => (c.redirect_uris ?? []).length > 0;
const accounts = config.accounts ?? {};

const provider = new Provider(config.issuer, {
  clients: config.clients.map((c) =>
    signsIn(c)
      ? {
          client_id: c.client_id,
          token_endpoint_auth_method: "none",
          grant_types: ["authorization_code"],
          redirect_uris: c.redirect_uris,
          response_types: ["code"],
          scope: c.scope,
        }
      : {
          client_id: c.client_id,
          client_secret: c.client_secret,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
          scope: c.scope,
        },
  ),
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  // People signed in are granted what their client asks, without a consent page.
  loadExistingGrant: async (ctx) => {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope("openid");
    grant.addResourceScope(config.audience, ctx.oidc.client.scope);
    await grant.save();
    return grant;
  },
  jwks: { keys: config.keys },
  scopes,
  features: {
    devInteractions: { enabled: config.clients.some(signsIn) },
    clientCredentials: { enabled: true },
    // Access tokens for one resource server (the audience), as JWTs rather than opaque ids.
    resourceIndicators: {
      enabled: true,
      defaultResource: () => config.audience,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: scopes.join(" "),
        audience: config.audience,
        accessTokenTTL: config.accessTokenTTL ?? 300,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
  extraTokenClaims: (ctx, token) =>
    token.accountId ? (accounts[token.accountId] ?? {}) : (byClient.get(token.clientId) ?? {}),
  cookies: { keys: ["test-issuer-cookie-key"] },
});

const server = provider.listen(config.port, "127.0.0.1", () => {
  console.log(`ready ${config.issuer}`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
