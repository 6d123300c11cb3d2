import { Module } from '@nestjs/common';
import { AuditModule } from '@/audit/audit.module';
import { AuthModule } from '@/auth/auth.module';
import { OAuthModule } from '@/oauth/oauth.module';
import { SignInController } from '@/sign-in/sign-in.controller';
import { SignInService } from '@/sign-in/sign-in.service';
import { Federation } from '@/sign-in/federation';
import { BrowserSessionController } from '@/sign-in/browser-session.controller';
import { BrowserSessions } from '@/sign-in/browser-session';

/** The pages a person signs in on, for the authorization server (oauth/). */
@Module({
  imports: [AuditModule, AuthModule, OAuthModule],
  controllers: [SignInController, BrowserSessionController],
  providers: [SignInService, Federation, BrowserSessions],
})
export class SignInModule {}
