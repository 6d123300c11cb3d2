import { Injectable } from '@nestjs/common';
import { Histogram } from 'prom-client';
import type { BuildJob } from '@/builds/build-queue';
import { JsonLogger } from '@/common/json-logger';
import { BuildRunsRepository } from '@/database/tables/build-runs.repository';
import { Engine } from '@/engine/engine';
import { MetricsService } from '@/metrics/metrics.service';
import { ParametersService } from '@/parameters/parameters.service';

/** The error a run cut off by a crash is recorded with. */
export const INTERRUPTED = 'Interrupted: the server process stopped during the build';

/**
 * What runs a build: the BullMQ worker (`BuildsProcessor`) or the in-process queue calls {@link run} on
 * whichever process takes the job. Queueing and the history are {@link BuildsService}'s.
 */
@Injectable()
export class BuildRunner {
  private readonly durations: Histogram<'status'>;

  constructor(
    private readonly runs: BuildRunsRepository,
    private readonly engine: Engine,
    private readonly parameters: ParametersService,
    private readonly logger: JsonLogger,
    metrics: MetricsService,
  ) {
    this.durations = new Histogram({
      name: 'drey_build_duration_seconds',
      help: 'Builds of the virtual data environment run by this process, by outcome',
      labelNames: ['status'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600],
      registers: [metrics.registry],
    });
  }

  /** Runs one build, recording it in the history; rejects with the build's error when it fails. */
  async run(job: BuildJob): Promise<void> {
    const { buildId } = job;
    // Builds run one at a time everywhere: any other unfinished build was cut off by a crash.
    await this.runs.failUnfinishedExcept(buildId, INTERRUPTED);
    await this.runs.markRunning(buildId);
    const started = Date.now();
    this.logger.emit('info', 'build started', { buildId });
    try {
      const result = await this.engine.build(buildId, {
        onProgress: (progress) =>
          this.logger.emit('debug', 'build progress', { buildId, ...progress }),
        beforeSwitch: (built) => this.parameters.prepareFor(buildId, built),
      });
      await this.runs.markSucceeded(
        buildId,
        result.file.split('/').pop() ?? null,
        result.models.map((model) => ({
          model: model.model,
          kind: model.kind,
          rows: model.rows,
          durationMs: Math.round(model.durationMs),
        })),
      );
      this.durations.observe({ status: 'succeeded' }, (Date.now() - started) / 1000);
      this.logger.emit('info', 'build succeeded', {
        buildId,
        models: result.models.length,
        durationMs: Date.now() - started,
      });
    } catch (error) {
      const message = errorMessage(error);
      await this.runs.markFailed(buildId, message);
      this.durations.observe({ status: 'failed' }, (Date.now() - started) / 1000);
      this.logger.emit('error', 'build failed', { buildId, error: message });
      throw error instanceof Error ? error : new Error(message);
    }
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    const model = (error as { model?: unknown }).model;
    return typeof model === 'string' && !error.message.includes(model)
      ? `Model "${model}": ${error.message}`
      : error.message;
  }
  return String(error);
}
