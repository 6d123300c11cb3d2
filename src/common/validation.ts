import { ValidationPipe } from '@nestjs/common';
import { InvalidRequestError } from '@/core/errors';

/**
 * The validation every DTO gets: unknown fields, wrong types and bad values are a 400 `invalid_request`
 * naming what is wrong. The global pipe and the login guard (which checks the form before passport reads
 * it) use the same one.
 */
export function validationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) =>
      new InvalidRequestError(
        errors
          .flatMap((error) =>
            Object.values(error.constraints ?? { [error.property]: 'is invalid' }),
          )
          .join('; '),
      ),
  });
}
