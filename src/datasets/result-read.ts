import type { CallerView, SelectionValues } from '@/core/parameters/selection-value';
import type { DatasetSpec } from '@/core/project/project';
import type { CachedRun } from '@/datasets/results/result-codec';
import type { HeldRows, SchemaField } from '@/datasets/results/result-shape';
import type { CompiledDataset } from '@/engine/compile';
import type { Environment } from '@/engine/environment/environment';
import type { JsonValue, RowWindow } from '@/engine/sql/query-result';

/*
 * What a read of a dataset's result is, from its checked selections to its rows: the words the results
 * reader (DatasetsService), its exports (DatasetExports) and the HTTP replies share.
 */

/** A read checked against the dataset's scope, with its selections validated and canonical. */
export interface ResultRead {
  dataset: DatasetSpec;
  selections: SelectionValues;
  view: CallerView;
  /**
   * The dataset's statement for these selections, compiled at the first call and reused by every query
   * of the read (its first rows, count, page or export); a read answered from the cache compiles nothing.
   */
  compiled: () => CompiledDataset;
  /**
   * Whose slots its uncached queries and exports take (see CallerSlots); null for a dashboard's read,
   * which runs within the slot of its render.
   */
  owner: string | null;
}

/** What keys a read on a build (see `resultKeyText`). */
export interface ResultKey {
  buildId: string;
  keyText: string;
  /** False for results that must not be reused (see `Engine.datasetReads`). */
  cacheable: boolean;
}

/** A read keyed on the build it is served from, whose environment the caller holds. */
export interface KeyedRead extends ResultRead, ResultKey {
  environment: Environment;
}

/**
 * The rows a window asks of a result, as the cache gave them: `run` holds the whole result when it is kept
 * whole, else that page of it, and `held` says which rows it holds (undefined: the whole result).
 */
export interface ResultPage {
  run: CachedRun;
  held?: HeldRows;
}

/** Which rows and columns of a result a caller reads. */
export interface RowsWanted extends RowWindow {
  /** Column names to keep, in the order asked; empty keeps every column. */
  columns: string[];
}

/** A dataset's rows for a caller and a selection: the columns read, the window's rows and the total. */
export interface DatasetRows {
  columns: SchemaField[];
  /** The database's own type of each column (`DECIMAL(38,2)`): a printer writes decimals at its scale. */
  databaseTypes: string[];
  rows: JsonValue[][];
  /** Rows of the whole result, before the window. */
  total: number;
}
