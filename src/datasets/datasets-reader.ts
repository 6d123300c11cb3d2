import { Registry } from 'prom-client';
import type { AppConfig } from '@/config/config';
import type { ServedProject } from '@/core/project/served-project';
import { DatasetsService } from '@/datasets/datasets.service';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import type { Engine } from '@/engine/engine';
import { ParameterCatalogService } from '@/parameter-catalog/parameter-catalog.service';
import type { JsonLogger } from '@/runtime/json-logger';

/**
 * The results reader outside Nest, for the command line (`drey run`): the same DatasetsService as every
 * other door, built from its plain constructor dependencies on an engine the caller opened and closes.
 * Its cache is this process's memory alone (no Redis: a one-shot command shares nothing), and its metrics
 * go to a registry nobody scrapes. Nest's application context would bring the database, Redis and the
 * build queue for what is four constructors.
 */
export function standaloneReader(
  engine: Engine,
  served: ServedProject,
  config: AppConfig,
  logger: JsonLogger,
): DatasetsService {
  const cache = new DatasetResultCache(config, null, { registry: new Registry() }, logger);
  const parameters = new ParameterCatalogService(engine, served);
  return new DatasetsService(engine, parameters, cache, served, config);
}
