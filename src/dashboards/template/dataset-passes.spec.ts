import {
  DatasetCall,
  DatasetCallError,
  DatasetFunction,
  renderWithDatasets,
} from '@/dashboards/template/dataset-passes';
import type { TemplateDataset } from '@/dashboards/template/helper-input';

const result = (rows: Record<string, unknown>[]): TemplateDataset => ({
  rows,
  columns: [],
  truncated: false,
});

describe('renderWithDatasets', () => {
  it('runs each distinct call once, then renders with the results', async () => {
    const batches: DatasetCall[][] = [];
    const html = await renderWithDatasets(
      (dataset) => {
        const a = dataset('a', { x: 1, y: 2 }).rows.length;
        const again = dataset('a', { y: 2, x: 1 }).rows.length;
        const b = dataset('b').rows.length;
        return `${a} ${again} ${b}`;
      },
      (calls) => {
        batches.push(calls);
        return Promise.resolve(calls.map((call) => result(call.dataset === 'a' ? [{}, {}] : [{}])));
      },
    );
    expect(html).toBe('2 2 1');
    expect(batches).toHaveLength(1);
    expect(batches[0].map((call) => [call.dataset, call.fixed])).toEqual([
      ['a', { x: 1, y: 2 }],
      ['b', {}],
    ]);
  });

  it('follows calls that only happen once earlier results are known', async () => {
    let runs = 0;
    const render = (dataset: DatasetFunction) => {
      const first = dataset('first').rows;
      return first.length > 0
        ? `then ${dataset('second', { id: first[0].id }).rows.length}`
        : 'empty';
    };
    const html = await renderWithDatasets(render, (calls) => {
      runs += calls.length;
      return Promise.resolve(calls.map(() => result([{ id: 7 }])));
    });
    expect(html).toBe('then 1');
    expect(runs).toBe(2);
  });

  it('retries a rendering that failed on empty placeholders, but not a template error', async () => {
    const html = await renderWithDatasets(
      (dataset) => {
        const rows = dataset('a').rows;
        if (rows.length === 0) throw new Error('cannot divide by nothing');
        return 'ok';
      },
      (calls) => Promise.resolve(calls.map(() => result([{}]))),
    );
    expect(html).toBe('ok');
    await expect(
      renderWithDatasets(
        () => {
          throw new Error('broken template');
        },
        () => Promise.resolve([]),
      ),
    ).rejects.toThrow('broken template');
  });

  it('rejects wrong calls while rendering, and limits the number of datasets of a page', async () => {
    const run = (calls: DatasetCall[]) => Promise.resolve(calls.map(() => result([])));
    await expect(renderWithDatasets((dataset) => JSON.stringify(dataset(42)), run)).rejects.toThrow(
      new DatasetCallError('dataset(): the first argument must be a dataset name'),
    );
    await expect(
      renderWithDatasets((dataset) => JSON.stringify(dataset('a', 'x')), run),
    ).rejects.toThrow(/fixed selections must be an object/);
    await expect(
      renderWithDatasets((dataset) => JSON.stringify(dataset('ghost')), run, {
        check: (call) => {
          throw new DatasetCallError(`no dataset ${call.dataset}`);
        },
      }),
    ).rejects.toThrow('no dataset ghost');
    const many = (dataset: DatasetFunction) =>
      Array.from({ length: 60 }, (_, i) => dataset('a', { i }).rows.length).join();
    await expect(renderWithDatasets(many, run)).rejects.toThrow('at most 50 datasets');
  });
});
