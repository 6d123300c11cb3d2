import { OAuthModule } from '@/oauth/oauth.module';
import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { AdminModule } from '@/admin/admin.module';
import { AuditModule } from '@/audit/audit.module';
import { CatalogModule } from '@/catalog/catalog.module';
import { DashboardsModule } from '@/dashboards/dashboards.module';
import { DatasetsModule } from '@/datasets/datasets.module';
import { MetricsModule } from '@/metrics/metrics.module';
import { ParameterCatalogModule } from '@/parameter-catalog/parameter-catalog.module';
import { ParameterWidgetsModule } from '@/parameter-widgets/parameter-widgets.module';
import { MCP_PATHS, McpController } from '@/mcp/mcp.controller';
import { McpChallengeMiddleware, McpProtectedResource } from '@/mcp/mcp-protected-resource';
import { McpHttp } from '@/mcp/mcp-http';
import { McpService } from '@/mcp/mcp.service';
import { McpTools } from '@/mcp/mcp-tools';
import { McpFileTools } from '@/mcp/mcp-file-tools';

/** The MCP server: the same services as the HTTP endpoints, as tools. */
@Module({
  imports: [
    AdminModule,
    AuditModule,
    CatalogModule,
    DashboardsModule,
    DatasetsModule,
    MetricsModule,
    ParameterCatalogModule,
    ParameterWidgetsModule,
    OAuthModule,
  ],
  controllers: [McpController],
  providers: [McpTools, McpFileTools, McpService, McpHttp, McpProtectedResource],
  exports: [McpService],
})
export class McpModule implements NestModule {
  /** The endpoint's 401 names its Protected Resource Metadata, the bearer guard's included. */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(McpChallengeMiddleware).forRoutes(...MCP_PATHS.map((path) => `/${path}`));
  }
}
