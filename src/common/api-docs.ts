import { applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiOAuth2, ApiParam } from '@nestjs/swagger';

/** The route takes a bearer token (Swagger UI's Authorize button fills it, through the login endpoint). */
export const ApiToken = () => applyDecorators(ApiBearerAuth('bearer'), ApiOAuth2([], 'login'));

/** The `:project` and `:version` path segments of both layouts. */
export const ApiProjectPath = () =>
  applyDecorators(
    ApiParam({ name: 'project', description: 'The project name', example: 'expenses' }),
    ApiParam({ name: 'version', description: '`v` and the project major version', example: 'v1' }),
  );
