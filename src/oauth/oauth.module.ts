import { GrantsController } from '@/oauth/grants.controller';
import { GrantsService } from '@/oauth/grants.service';
import { AuditModule } from '@/audit/audit.module';
import { Module } from '@nestjs/common';
import { AuthorizationServer } from '@/oauth/authorization-server';
import { OAuthController } from '@/oauth/oauth.controller';
import { OAuthAccess } from '@/oauth/oauth-access';

/** Drey's own authorization server (OAUTH_SERVER): the library's endpoints and metadata. */
@Module({
  imports: [AuditModule],
  controllers: [OAuthController, GrantsController],
  providers: [AuthorizationServer, OAuthAccess, GrantsService],
  exports: [AuthorizationServer, OAuthAccess, GrantsService],
})
export class OAuthModule {}
