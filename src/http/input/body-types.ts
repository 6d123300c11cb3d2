import {
  CanActivate,
  ExecutionContext,
  Injectable,
  SetMetadata,
  applyDecorators,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiConsumes } from '@nestjs/swagger';
import type { Request } from 'express';
import { UnsupportedMediaTypeError } from '@/core/errors';
import { mediaType } from '@/http/input/media-type';

const BODY_TYPES = 'drey:body-types';
/** What a route takes when it says nothing: every body of the interface but the login form is JSON. */
const DEFAULT_BODY_TYPES = ['application/json'];

/**
 * The media types a route's body may have; the OpenAPI document lists the same ones. Without it, JSON.
 * A body of any other type is refused with 415 instead of being ignored (an unparsed body would silently
 * run the request with default selections).
 */
export const BodyTypes = (...types: string[]) =>
  applyDecorators(SetMetadata(BODY_TYPES, types), ApiConsumes(...types));

/** True when the request carries a body, whatever its length header says. */
function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}

/**
 * Refuses a body whose media type the route does not take. Express' parsers have run by then (they parse
 * only the types they know, and leave other bodies unread); this guard runs before the others, so a body of
 * the wrong type is a 415 whatever the path, the token or the project.
 */
@Injectable()
export class BodyTypeGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<Request>();
    if (!hasBody(request)) return true;
    const accepted =
      this.reflector.getAllAndOverride<string[] | undefined>(BODY_TYPES, [
        context.getHandler(),
        context.getClass(),
      ]) ?? DEFAULT_BODY_TYPES;
    const type = mediaType(request.headers['content-type']);
    if (accepted.includes(type)) return true;
    throw new UnsupportedMediaTypeError(
      `This endpoint takes a body of type ${accepted.join(' or ')}, not ${type || 'an untyped body'}`,
    );
  }
}
