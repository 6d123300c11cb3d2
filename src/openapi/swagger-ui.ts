import type { NextFunction, Request, Response } from 'express';
import { pagePolicy } from '@/http/security-headers';

/**
 * What Swagger UI (`/docs`, `P/docs`, served by @nestjs/swagger from swagger-ui-dist) loads: its scripts and
 * stylesheet from beside the page, the page's own `<style>` blocks and style attributes, its icons as data:
 * URLs, and the calls of the Authorize dialog and of "Try it out" to this origin. Nothing else.
 */
export const SWAGGER_UI_POLICY = pagePolicy({
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
});

/**
 * Express middleware in front of Swagger UI's routes (they are not Nest controllers, so no `@Header`):
 * the page and its files get Swagger UI's policy in place of the API's.
 */
export function swaggerUiPolicy() {
  return (_request: Request, response: Response, next: NextFunction): void => {
    response.setHeader('Content-Security-Policy', SWAGGER_UI_POLICY);
    next();
  };
}
