import { Module } from '@nestjs/common';
import { AuditModule } from '@/audit/audit.module';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { AuthController } from '@/auth/auth.controller';
import { AuthLegacyController } from '@/auth/auth.legacy.controller';
import { AuthService } from '@/auth/auth.service';
import { BearerAuthGuard } from '@/auth/bearer-auth.guard';
import { JwtStrategy } from '@/auth/jwt.strategy';
import { LocalStrategy } from '@/auth/local.strategy';
import { LoginGuard } from '@/auth/login.guard';
import { LoginLimiter } from '@/auth/login-limiter';
import { SsoService } from '@/auth/sso/sso.service';
import { TokensService } from '@/auth/tokens.service';
import { EmbedTokensController } from '@/auth/embed-tokens.controller';
import { EmbedTokensService } from '@/auth/embed-tokens.service';
import { MetricsModule } from '@/metrics/metrics.module';
import { TokenCaller } from '@/auth/token-caller';
import { SECRETS, Secrets } from '@/config/secrets';
import { UsersModule } from '@/users/users.module';

@Module({
  imports: [
    JwtModule.registerAsync({
      inject: [SECRETS],
      useFactory: (secrets: Secrets) => ({
        secret: secrets.jwtSecret,
        // Signing only: JwtStrategy (passport-jwt) verifies.
        signOptions: { algorithm: 'HS256' },
      }),
    }),
    PassportModule,
    AuditModule,
    UsersModule,
    MetricsModule,
  ],
  controllers: [AuthController, AuthLegacyController, EmbedTokensController],
  providers: [
    TokensService,
    EmbedTokensService,
    AuthService,
    LoginLimiter,
    SsoService,
    JwtStrategy,
    LocalStrategy,
    LoginGuard,
    // A global guard, registered with the others in AppModule, in the order they run.
    BearerAuthGuard,
    TokenCaller,
  ],
  // TokenCaller: `drey mcp` signs in with a token outside HTTP.
  exports: [BearerAuthGuard, TokenCaller],
})
export class AuthModule {}
