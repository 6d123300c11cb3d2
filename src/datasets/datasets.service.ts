import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/auth/caller';
import { callerView, requireScope } from '@/auth/scope';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { parseResultOptions } from '@/datasets/result-options';
import {
  DatasetResult,
  SchemaField,
  legacyResult,
  schemaFields,
  shapeResult,
} from '@/datasets/result-shape';
import { Engine } from '@/engine/engine';
import type { QueryResult } from '@/engine/query/query-result';
import { ParametersService } from '@/parameters/parameters.service';
import type { ParameterRequest } from '@/parameters/selection-request';
import { findItem } from '@/project/items';
import { DatasetSpec, Project, findModel } from '@/project/project';
import { PROJECT } from '@/project/project.tokens';

/** A dataset's whole result for one request's selections, with its schema fields. */
export interface DatasetRun {
  dataset: DatasetSpec;
  result: QueryResult;
  fields: SchemaField[];
}

@Injectable()
export class DatasetsService {
  constructor(
    private readonly engine: Engine,
    private readonly parameters: ParametersService,
    @Inject(PROJECT) private readonly project: Project,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `P/datasets/{dataset}/results`: scope, selections, one query, then paging and orientation. */
  async results(caller: Caller, name: string, request: ParameterRequest): Promise<DatasetResult> {
    const options = parseResultOptions(request.builtins, this.config.maxResultRows);
    const run = await this.run(caller, name, request);
    return shapeResult(run.result, run.fields, options);
  }

  /** The legacy `dataset/{name}`: every row as a record, with `dimensions`. */
  async legacyResults(caller: Caller, name: string, request: ParameterRequest): Promise<object> {
    const run = await this.run(caller, name, request);
    return legacyResult(run.result, run.fields);
  }

  /** Runs a dataset for a caller: scope check, validated selections (defaults applied), the model. */
  async run(caller: Caller, name: string, request: ParameterRequest): Promise<DatasetRun> {
    const dataset = findItem(this.project, 'dataset', name, request.layout === 'legacy');
    requireScope(dataset.scope, caller, `the dataset "${dataset.name}"`);
    const catalog = await this.parameters.catalog();
    const view = callerView(caller);
    const selections = catalog.selections(dataset.parameters, request, view);
    const result = await this.engine.runDataset(dataset.name, selections, view);
    return { dataset, result, fields: this.fieldsOf(dataset, result) };
  }

  private fieldsOf(dataset: DatasetSpec, result: QueryResult): SchemaField[] {
    return schemaFields(result, findModel(this.project, dataset.model)?.columns);
  }
}
