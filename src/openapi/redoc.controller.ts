import { Controller, Get, Header, Headers, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request } from 'express';
import { NoAuth } from '@/http/access/access.decorators';
import { HttpReply, KeptScript } from '@/http/reply/http-reply';
import { CURRENT } from '@/http/routes';
import { REDOC_POLICY, REDOC_SCRIPT, redocBundle, redocPage } from '@/openapi/redoc-page';
import { ServedProject } from '@/core/project/served-project';

const PAGES = ['redoc', `${CURRENT}/redoc`];

/**
 * ReDoc over the OpenAPI document, at `/redoc` and `P/redoc` (beside Swagger UI's `/docs` and `P/docs`),
 * served by Drey itself: Squirrels Studio links to `P/redoc`. A documentation page, not an API endpoint,
 * so it is left out of the document it draws.
 */
@ApiExcludeController()
@NoAuth()
@Controller()
export class RedocController {
  /**
   * The bundle (1 MB), compressed once per process by the one writer at the first request that asks for each
   * coding, then sent as kept (see swaggerUiAssets for why not at start).
   */
  private readonly bundle = new KeptScript(redocBundle());

  constructor(private readonly served: ServedProject) {}

  @Get(PAGES)
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', REDOC_POLICY)
  @Header('Cache-Control', 'no-cache')
  page(@Req() request: Request): string {
    // The page's own path without `/redoc`: '' at the root, the project's prefix under it.
    const base = request.path.replace(/\/redoc\/?$/, '');
    return redocPage(`Drey: ${this.served.current.label}`, base);
  }

  @Get(PAGES.map((page) => `${page}/${REDOC_SCRIPT}`))
  script(@Headers('if-none-match') ifNoneMatch?: string): HttpReply {
    return this.bundle.reply(ifNoneMatch);
  }
}
