import { DomainError } from '@/core/errors';

/** A selection that its parameter does not accept (400 `invalid_parameter_selection`). */
export class InvalidSelectionError extends DomainError {
  constructor(message: string) {
    super('invalid_parameter_selection', message);
  }
}

/** With `x_verify_params=true`: a name the endpoint does not take (400 `unknown_parameter`). */
export class UnknownParameterError extends DomainError {
  constructor(message: string) {
    super('unknown_parameter', message);
  }
}

/** The message names the parameter first, so a person knows which field to fix. */
export function invalidSelection(parameter: string, problem: string): InvalidSelectionError {
  return new InvalidSelectionError(`Parameter "${parameter}": ${problem}`);
}
