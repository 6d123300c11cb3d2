import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { AuthController } from '@/auth/auth.controller';
import { AuthGuard } from '@/auth/auth.guard';
import { AuthLegacyController } from '@/auth/auth.legacy.controller';
import { AuthService } from '@/auth/auth.service';
import { LoginLimiter } from '@/auth/login-limiter';
import { ProjectRouteGuard } from '@/auth/project-route.guard';
import { SsoService } from '@/auth/sso/sso.service';
import { TokensService } from '@/auth/tokens.service';
import { SECRETS, Secrets } from '@/config/secrets';
import { UsersModule } from '@/users/users.module';
import { AuditModule } from '@/audit/audit.module';

@Module({
  imports: [
    JwtModule.registerAsync({
      inject: [SECRETS],
      useFactory: (secrets: Secrets) => ({
        secret: secrets.jwtSecret,
        signOptions: { algorithm: 'HS256' },
        verifyOptions: { algorithms: ['HS256'] },
      }),
    }),
    UsersModule,
    AuditModule,
  ],
  controllers: [AuthController, AuthLegacyController],
  providers: [
    TokensService,
    AuthService,
    LoginLimiter,
    SsoService,
    // Order matters: an unknown project is a 404 before the token is looked at.
    { provide: APP_GUARD, useClass: ProjectRouteGuard },
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [TokensService, AuthService],
})
export class AuthModule {}
