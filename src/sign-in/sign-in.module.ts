import { Module } from '@nestjs/common';
import { AuditModule } from '@/audit/audit.module';
import { AuthModule } from '@/auth/auth.module';
import { OAuthModule } from '@/oauth/oauth.module';
import { SignInController } from '@/sign-in/sign-in.controller';
import { SignInService } from '@/sign-in/sign-in.service';
import { Federation } from '@/sign-in/federation';

/** The pages a person signs in on, for the authorization server (oauth/). */
@Module({
  imports: [AuditModule, AuthModule, OAuthModule],
  controllers: [SignInController],
  providers: [SignInService, Federation],
})
export class SignInModule {}
