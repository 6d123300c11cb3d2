import { Injectable } from '@nestjs/common';
import { Credential, jwtAlgorithm } from '@/auth/credentials';
import { DreyTokens } from '@/auth/drey-tokens';
import { EmbedTokensService } from '@/auth/embed-tokens.service';
import { SsoService } from '@/auth/sso/sso.service';
import { ANONYMOUS, Caller } from '@/core/caller';
import { InvalidTokenError } from '@/core/errors';
import { OAuthAccess, isOpaqueToken } from '@/oauth/oauth-access';

/**
 * The one place a credential becomes a caller, for every door: both HTTP layouts (through passport,
 * CallerStrategy), the fast route (the same guard), MCP over HTTP (the same guard) and over stdio
 * (`drey mcp`), and embedding. It knows each kind of credential:
 * - an embedding token (its `aud` says so), by bearer or `x_embed_token`: EmbedTokensService;
 * - with OIDC configured, an identity provider's token (any algorithm but Drey's HS256): SsoService;
 * - with Drey's authorization server on, one of its access tokens (opaque), at the MCP endpoint: OAuthAccess;
 * - a Drey token (login or named): DreyTokens, by bearer or, on the MCP endpoint, `x-api-key`;
 * - identity headers from a trusted proxy: SsoService; without them, nobody (anonymous).
 * A refused credential is a 401 `invalid_token` that says why, the same at every door.
 */
@Injectable()
export class CallerResolver {
  constructor(
    private readonly drey: DreyTokens,
    private readonly embeds: EmbedTokensService,
    private readonly sso: SsoService,
    private readonly oauth: OAuthAccess,
  ) {}

  /**
   * Not `async`: a cached read resolves a Drey token on every request, and each `async` layer between the
   * guard and the token's row is one more promise to settle (the resolver hands the inner promise on).
   */
  resolve(credential: Credential): Promise<Caller> {
    switch (credential.kind) {
      case 'none':
        return Promise.resolve(ANONYMOUS);
      case 'browser-session':
        // A Drey login token the browser sign-in page set, and nothing else.
        if (
          jwtAlgorithm(credential.token) !== 'HS256' ||
          this.embeds.isEmbedToken(credential.token)
        ) {
          return Promise.reject(new InvalidTokenError());
        }
        return this.drey.callerOf(credential.token);
      case 'identity-headers':
        return this.sso.fromHeaders(credential.request).then((caller) => caller ?? ANONYMOUS);
      case 'embed-link':
        if (!this.embeds.isEmbedToken(credential.token)) {
          return Promise.reject(
            new InvalidTokenError(
              'x_embed_token carries embedding tokens only: send other tokens as Authorization: Bearer',
            ),
          );
        }
        return this.embeds.callerOf(credential.token);
      case 'api-key':
        // A Drey token only: an embedding token has its own ways (bearer, x_embed_token), and an
        // identity provider's token is sent as the provider issued it, a bearer token.
        if (this.embeds.isEmbedToken(credential.token)) {
          return Promise.reject(
            new InvalidTokenError(
              'x-api-key carries Drey tokens only: send an embedding token as Authorization: Bearer',
            ),
          );
        }
        if (jwtAlgorithm(credential.token) !== 'HS256') {
          return Promise.reject(
            new InvalidTokenError(
              "x-api-key carries Drey tokens only: send an identity provider's token as Authorization: Bearer",
            ),
          );
        }
        return this.drey.callerOf(credential.token);
      case 'bearer': {
        const { token } = credential;
        if (this.embeds.isEmbedToken(token)) return this.embeds.callerOf(token);
        if (this.oauth.enabled && isOpaqueToken(token)) {
          return this.oauth.callerOf(token, credential.request);
        }
        if (this.sso.oidcEnabled && jwtAlgorithm(token) !== 'HS256') {
          return this.sso.fromIdpToken(token);
        }
        return this.drey.callerOf(token);
      }
    }
  }
}
