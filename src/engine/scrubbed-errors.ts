import { BuildError, BuildInterruptedError } from '@/engine/materialize/materialize-environment';
import { DomainError, ModelFailedError } from '@/core/errors';
import type { ServerPaths } from '@/engine/server-paths';

/**
 * The engine's errors as they leave it: their messages taken out of the server's paths, since what the
 * engine says reaches administrators (a build's error, a model's, their own SQL's), never the folders it
 * runs in.
 */
export class ScrubbedErrors {
  constructor(private readonly paths: ServerPaths) {}

  /** Runs `work`, its errors scrubbed. */
  async around<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.of(error);
    }
  }

  of(error: unknown): unknown {
    let scrubbed: DomainError;
    // Its message names a signal, nothing of the server.
    if (error instanceof BuildInterruptedError) return error;
    if (error instanceof ModelFailedError) {
      scrubbed = new ModelFailedError(error.model, this.paths.scrub(error.engineMessage));
    } else if (error instanceof BuildError) {
      scrubbed = new BuildError(this.paths.scrub(error.message), error.model, error.fault);
    } else if (error instanceof DomainError) {
      scrubbed = new DomainError(
        error.code,
        this.paths.scrub(error.message),
        error.retryAfterSeconds,
      );
    } else {
      // Not a DomainError: answered as an internal error, whose message no client sees.
      return error;
    }
    scrubbed.cause = error.cause;
    return scrubbed;
  }
}

/** An engine failure as the model's (`model_failed`); the service's own errors as they are. */
export function modelError(model: string, error: unknown): unknown {
  if (error instanceof DomainError) return error;
  return new ModelFailedError(model, error instanceof Error ? error.message : String(error));
}
