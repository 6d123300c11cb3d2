import { KeptPerView } from '@/mcp/kept-per-view';

describe('KeptPerView', () => {
  it('works a value out once per source and view', () => {
    const kept = new KeptPerView<object, number>(4);
    const source = {};
    const make = jest.fn(() => 1);
    kept.get(source, 'a', make);
    kept.get(source, 'a', make);
    expect(make).toHaveBeenCalledTimes(1);
    kept.get(source, 'b', make);
    kept.get({}, 'a', make);
    expect(make).toHaveBeenCalledTimes(3);
  });

  it('keeps at most max views per source, the oldest going first', () => {
    const kept = new KeptPerView<object, string>(3);
    const source = {};
    const made: string[] = [];
    const get = (view: string) =>
      kept.get(source, view, () => {
        made.push(view);
        return view;
      });
    for (const view of ['a', 'b', 'c', 'd']) get(view);
    get('d');
    get('b');
    expect(made).toEqual(['a', 'b', 'c', 'd']);
    get('a');
    expect(made).toEqual(['a', 'b', 'c', 'd', 'a']);
  });
});
