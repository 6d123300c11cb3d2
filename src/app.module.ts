import { OAuthModule } from '@/oauth/oauth.module';
import { SignInModule } from '@/sign-in/sign-in.module';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { AdminModule } from '@/admin/admin.module';
import { AuditModule } from '@/audit/audit.module';
import { AuthModule } from '@/auth/auth.module';
import { EmbeddingModule } from '@/embedding/embedding.module';
import { BearerAuthGuard } from '@/auth/bearer-auth.guard';
import { BuildsModule } from '@/builds/builds.module';
import { WebhooksModule } from '@/webhooks/webhooks.module';
import { CacheModule } from '@/cache/cache.module';
import { CatalogModule } from '@/catalog/catalog.module';
import { BodyTypeGuard } from '@/http/input/body-types';
import { ProjectRouteGuard } from '@/http/access/project-route.guard';
import { HttpErrorFilter } from '@/http/errors/http-error.filter';
import { JsonLogger } from '@/runtime/json-logger';
import { AppConfig } from '@/config/config';
import { ConfigModule } from '@/config/config.module';
import type { Secrets } from '@/config/secrets';
import { DashboardsModule } from '@/dashboards/dashboards.module';
import { DatabaseModule } from '@/database/database.module';
import { DatasetsModule } from '@/datasets/datasets.module';
import { DocsModule } from '@/openapi/docs.module';
import { FastRouteModule } from '@/http/fast-route/fast-route.module';
import { EngineModule } from '@/engine/engine.module';
import { HealthModule } from '@/health/health.module';
import { MetricsModule } from '@/metrics/metrics.module';
import { McpModule } from '@/mcp/mcp.module';
import { ParameterWidgetsModule } from '@/parameter-widgets/parameter-widgets.module';
import { ProjectModule } from '@/config/project.module';
import type { Project } from '@/core/project/project';
import { UsersModule } from '@/users/users.module';

@Module({})
export class AppModule {
  /** The configuration is validated before Nest starts, so modules that depend on it are chosen here. */
  static forRoot(
    config: AppConfig,
    logger: JsonLogger,
    secrets: Secrets,
    project?: Project,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, logger, secrets),
        DatabaseModule,
        CacheModule,
        AuditModule,
        ProjectModule.forRoot(project),
        BuildsModule,
        WebhooksModule,
        EngineModule,
        AuthModule,
        OAuthModule,
        SignInModule,
        EmbeddingModule,
        UsersModule,
        ParameterWidgetsModule,
        CatalogModule,
        DatasetsModule,
        DashboardsModule,
        AdminModule,
        HealthModule,
        McpModule,
        DocsModule,
        MetricsModule,
        FastRouteModule,
        ...BuildsModule.transport(config),
        ...WebhooksModule.transport(config),
      ],
      providers: [
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        // Every global guard, here and nowhere else: Nest runs APP_GUARDs in the order it registers them,
        // module by module, so with all of them in this one list the order they run is the order of the list.
        // A body of a type the route does not take is a 415 whatever the path, project or token;
        { provide: APP_GUARD, useClass: BodyTypeGuard },
        // a path naming another project or version is a 404 before a token is looked at;
        { provide: APP_GUARD, useClass: ProjectRouteGuard },
        // then the caller: a token, identity headers or nobody, against the route's access (auth.module.ts
        // provides it, with the passport strategies and SsoService it stands on).
        { provide: APP_GUARD, useExisting: BearerAuthGuard },
      ],
    };
  }
}
