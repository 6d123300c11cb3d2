import { Header, StreamableFile, applyDecorators } from '@nestjs/common';
import { ApiOkResponse, ApiProduces } from '@nestjs/swagger';
import type { RenderedDashboard } from '@/dashboards/dashboards.service';
import { CONTENT_SECURITY_POLICY_HEADER } from '@/dashboards/template/page-layout';

/**
 * The response body of a dashboard. A Buffer returned from a handler would be sent as JSON; a
 * StreamableFile is sent as bytes with its type and length, and errors still reach the error filter.
 */
export function toDashboardFile(rendered: RenderedDashboard): StreamableFile {
  return new StreamableFile(rendered.body, {
    type: rendered.contentType,
    length: rendered.body.length,
    disposition: `inline; filename="${rendered.name}.${rendered.format}"`,
  });
}

/**
 * Headers and documentation of a dashboard result. It depends on the caller and the data (no caching), and
 * the page's own policy is repeated as a header in place of the API's (the other security headers, as on
 * every response, come from `http/security-headers.ts`).
 */
export const DashboardResult = () =>
  applyDecorators(
    Header('Cache-Control', 'private, no-store'),
    Header('Content-Security-Policy', CONTENT_SECURITY_POLICY_HEADER),
    ApiProduces('text/html', 'image/png'),
    ApiOkResponse({
      description: "The rendered dashboard: HTML or PNG, as the catalog entry's result_format says",
      content: {
        'text/html': { schema: { type: 'string' } },
        'image/png': { schema: { type: 'string', format: 'binary' } },
      },
    }),
  );
