import { Module } from '@nestjs/common';
import { AuthorizationServer } from '@/oauth/authorization-server';
import { OAuthController } from '@/oauth/oauth.controller';
import { OAuthAccess } from '@/oauth/oauth-access';

/** Drey's own authorization server (OAUTH_SERVER): the library's endpoints and metadata. */
@Module({
  controllers: [OAuthController],
  providers: [AuthorizationServer, OAuthAccess],
  exports: [AuthorizationServer, OAuthAccess],
})
export class OAuthModule {}
