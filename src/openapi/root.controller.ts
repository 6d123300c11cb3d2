import { Controller, Get, Redirect } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { NoAuth } from '@/http/access/access.decorators';

/**
 * `GET /` (and HEAD, which Express answers from GET) sends a browser to Swagger UI: people open the bare
 * address first, and a 404 there read as "the service is down". A 302, not a 301, so that a later version
 * may put a landing page here without browsers having cached the redirect. Not an API operation: left out
 * of the OpenAPI document.
 */
@ApiExcludeController()
@NoAuth()
@Controller()
export class RootController {
  @Get('/')
  @Redirect('/docs', 302)
  root(): void {}
}
