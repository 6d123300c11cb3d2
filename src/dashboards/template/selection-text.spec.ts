import { selectedData, shownSelections } from '@/dashboards/template/selection-text';
import type { SelectionValues } from '@/core/parameters/selection-value';

const values: SelectionValues = {
  date_range: { widget: 'date_range', start: '2024-01-01', end: '2024-03-31' },
  category: { widget: 'multi_select', selected: [] },
  subcategory: {
    widget: 'multi_select',
    selected: [
      { id: '0', label: 'Dining Out', fields: { secret: 'x' } },
      { id: '1', label: 'Groceries', fields: {} },
    ],
  },
  limit: { widget: 'disabled' },
  description_filter: { widget: 'text', text: '' },
};

describe('selections on the page', () => {
  it('in words, in the dashboard’s order, disabled ones left out', () => {
    const labels: Record<string, string> = { date_range: 'Date Range', category: 'Category' };
    expect(
      shownSelections(Object.keys(values), values, (name) => labels[name] ?? name).map(
        (s) => `${s.label}: ${s.text}`,
      ),
    ).toEqual([
      'Date Range: 2024-01-01 – 2024-03-31',
      'Category: All',
      'subcategory: Dining Out, Groceries',
      'description_filter: Any',
    ]);
  });

  it('as data for templates, without the options’ custom fields', () => {
    expect(selectedData(values)).toEqual({
      date_range: { start: '2024-01-01', end: '2024-03-31' },
      category: [],
      subcategory: [
        { id: '0', label: 'Dining Out' },
        { id: '1', label: 'Groceries' },
      ],
      limit: null,
      description_filter: '',
    });
  });
});
