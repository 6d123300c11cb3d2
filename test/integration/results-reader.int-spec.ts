import type * as CallerFile from '@/core/caller';
import type * as DatasetsServiceFile from '@/datasets/datasets.service';
import type * as DatasetExportsFile from '@/datasets/dataset-exports';
import type * as EngineFile from '@/engine/engine';
import type * as RequestScopeFile from '@/runtime/request-scope';
import type * as SelectionRequestFile from '@/core/parameters/selection-request';
import { P } from '../support/api';
import { fromDist, useApp } from './bootstrap';

/**
 * The results reader (DatasetsService) called as MCP and dashboards call it, outside any HTTP request:
 * rows, columns and the total for a caller and a selection, from the engine and then from the cache, the
 * same as the HTTP read answers; and the query slots taken by the address it is given, not by a request.
 */
describe('the results reader', () => {
  const t = useApp({ env: { CALLER_MAX_EXPORTS: '1' } });
  const { DatasetsService } = fromDist<typeof DatasetsServiceFile>('datasets/datasets.service');
  const { DatasetExports } = fromDist<typeof DatasetExportsFile>('datasets/dataset-exports');
  const { Engine } = fromDist<typeof EngineFile>('engine/engine');
  const { ANONYMOUS } = fromDist<typeof CallerFile>('core/caller');
  const { currentRequest } = fromDist<typeof RequestScopeFile>('runtime/request-scope');
  const { parseBodySelections } = fromDist<typeof SelectionRequestFile>(
    'core/parameters/selection-request',
  );
  const reader = () => t.app.get(DatasetsService);
  const selections = { start_date: '2024-03-01' };

  it('answers rows, columns and total from the engine, then from the cache, with no request in scope', async () => {
    expect(currentRequest()).toBeUndefined();
    const runs = jest.spyOn(t.app.get(Engine), 'runDataset');
    const request = () => parseBodySelections(selections);
    const first = await reader().rows(
      ANONYMOUS,
      'expenses_by_month',
      request(),
      { offset: 0, limit: 3, columns: [] },
      '203.0.113.7',
    );
    expect(runs).toHaveBeenCalledTimes(1);
    expect(first.rows).toHaveLength(3);
    expect(first.total).toBeGreaterThan(3);
    expect(first.columns.map((column) => column.name)).toEqual(['month', 'total_amount']);

    // Another window and one column of the same result: cut from the cache, no query.
    const second = await reader().rows(
      ANONYMOUS,
      'expenses_by_month',
      request(),
      { offset: 1, limit: 2, columns: ['total_amount'] },
      undefined,
    );
    expect(runs).toHaveBeenCalledTimes(1);
    expect(second.total).toBe(first.total);
    expect(second.columns.map((column) => column.name)).toEqual(['total_amount']);
    expect(second.rows).toEqual(first.rows.slice(1, 3).map((row) => [row[1]]));

    // What the HTTP read of the same selections answers, from the same cache entry.
    const http = await t
      .http()
      .post(`${P}/datasets/expenses_by_month/results`)
      .send({ ...selections, x_orientation: 'rows', x_limit: 3 });
    expect(http.status).toBe(200);
    expect(http.body.data).toEqual(first.rows);
    expect(http.body.total_num_rows).toBe(first.total);
    expect(http.body.schema.fields).toEqual(first.columns);
    expect(runs).toHaveBeenCalledTimes(1);
  });

  it('refuses an unknown column and a dataset the caller may not open, as the HTTP read does', async () => {
    const request = parseBodySelections({});
    const window = { offset: 0, limit: 1 };
    await expect(
      reader().rows(
        ANONYMOUS,
        'expenses_by_month',
        request,
        { ...window, columns: ['nope'] },
        undefined,
      ),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'x_select names an unknown column "nope"',
    });
    await expect(
      reader().rows(ANONYMOUS, 'expenses_grouped', request, { ...window, columns: [] }, undefined),
    ).rejects.toMatchObject({ code: 'authentication_required' });
  });

  it("takes an anonymous caller's export slot by the address it is given", async () => {
    const exportOf = async (address: string) => {
      const read = await reader().resolve(
        ANONYMOUS,
        'expenses_by_month',
        parseBodySelections({}),
        address,
      );
      return t.app
        .get(DatasetExports)
        .chunks(read, 'csv', { select: [], offset: 0, limit: undefined }, 'escaped')
        [Symbol.asyncIterator]();
    };
    const held = await exportOf('203.0.113.8');
    const started: IteratorResult<unknown> = await held.next();
    expect(started.done).toBe(false);
    try {
      const same = await exportOf('203.0.113.8');
      await expect(same.next()).rejects.toMatchObject({ code: 'rate_limited' });
      const other = await exportOf('198.51.100.1');
      const answered = await other.next();
      expect(answered.done).toBe(false);
      await other.return?.(undefined);
    } finally {
      await held.return?.(undefined);
    }
  });
});
