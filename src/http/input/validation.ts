import { UsePipes, ValidationPipe } from '@nestjs/common';
import { InvalidRequestError } from '@/core/errors';

/**
 * DTO validation for a controller that takes DTOs (`src/architecture.spec.ts` checks that each does). It is
 * not a global pipe: Nest runs global pipes as async steps on every parameter of every route, and on the
 * cached dataset read (six parameters, none a DTO) that was a large share of its CPU time (see
 * docs/performance.md, "Figures behind the code", "No global validation pipe"). A controller whose
 * handlers take a class-validator DTO carries this decorator.
 */
export const ValidateDtos = (
  unknownFields: UnknownFields = 'refuse',
): ClassDecorator & MethodDecorator => UsePipes(validationPipe(unknownFields));

/**
 * What a DTO does with a field it does not declare: `refuse` (400, the rule, and what the document states
 * with `additionalProperties: false`), or `ignore` (dropped before the handler sees it), for a body that
 * has always taken other keys without a word (query-models').
 */
export type UnknownFields = 'refuse' | 'ignore';

/**
 * The validation every DTO gets: unknown fields, wrong types and bad values are a 400 `invalid_request`
 * naming what is wrong. `@ValidateDtos()` and the login guard (which checks the form before passport reads
 * it) use the same one.
 */
export function validationPipe(unknownFields: UnknownFields = 'refuse'): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: unknownFields === 'refuse',
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
