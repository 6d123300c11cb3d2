import { Controller, Get, Headers, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { NoAuth } from '@/http/access/access.decorators';
import type { HttpReply } from '@/http/reply/http-reply';
import { faviconReply, FAVICON_PATH } from '@/openapi/favicon';

/**
 * `GET /` (and HEAD, which Express answers from GET) sends a browser to Swagger UI: people open the bare
 * address first, and a 404 there read as "the service is down". A 302, not a 301, so that a later version
 * may put a landing page here without browsers having cached the redirect. `GET /favicon.ico`, which every
 * browser asks of every page's origin: Drey's icon. Neither is an API operation: left out of the OpenAPI
 * document.
 */
@ApiExcludeController()
@NoAuth()
@Controller()
export class RootController {
  @Get('/')
  @Redirect('/docs', 302)
  root(): void {}

  @Get(FAVICON_PATH)
  favicon(@Headers('if-none-match') ifNoneMatch?: string): HttpReply {
    return faviconReply(ifNoneMatch);
  }
}
