import { OAuthModule } from '@/oauth/oauth.module';
import { Module } from '@nestjs/common';
import { AuditModule } from '@/audit/audit.module';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { AuthController } from '@/auth/auth.controller';
import { AuthLegacyController } from '@/auth/auth.legacy.controller';
import { AuthService } from '@/auth/auth.service';
import { BearerAuthGuard } from '@/auth/bearer-auth.guard';
import { CallerResolver } from '@/auth/caller-resolver';
import { CallerStrategy } from '@/auth/caller.strategy';
import { DreyTokens } from '@/auth/drey-tokens';
import { LocalStrategy } from '@/auth/local.strategy';
import { LoginGuard } from '@/auth/login.guard';
import { LoginLimiter } from '@/auth/login-limiter';
import { SsoService } from '@/auth/sso/sso.service';
import { TokensService } from '@/auth/tokens.service';
import { EmbedTokensService } from '@/auth/embed-tokens.service';
import { MetricsModule } from '@/metrics/metrics.module';
import { SECRETS, Secrets } from '@/config/secrets';
import { UsersModule } from '@/users/users.module';

@Module({
  imports: [
    JwtModule.registerAsync({
      inject: [SECRETS],
      useFactory: (secrets: Secrets) => ({
        secret: secrets.jwtSecret,
        // Signing only: DreyTokens (jose) verifies, for CallerResolver.
        signOptions: { algorithm: 'HS256' },
      }),
    }),
    PassportModule,
    AuditModule,
    UsersModule,
    MetricsModule,
    OAuthModule,
  ],
  controllers: [AuthController, AuthLegacyController],
  providers: [
    TokensService,
    EmbedTokensService,
    AuthService,
    LoginLimiter,
    SsoService,
    DreyTokens,
    CallerResolver,
    CallerStrategy,
    LocalStrategy,
    LoginGuard,
    // A global guard, registered with the others in AppModule, in the order they run.
    BearerAuthGuard,
  ],
  // CallerResolver: `drey mcp` signs in with a token outside HTTP, through the same resolver.
  exports: [BearerAuthGuard, CallerResolver, AuthService, SsoService],
})
export class AuthModule {}
