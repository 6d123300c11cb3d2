import { join } from 'node:path';
import { ignored } from '@/cli/watch-ignore';

describe("drey dev's watcher leaves out what is not the author's", () => {
  const project = '/home/me/shop';
  const at = (...parts: string[]) => join(project, ...parts);

  it('watches the project, its files and its new folders', () => {
    for (const path of [
      project,
      at('project.yml'),
      at('models', 'orders.sql'),
      at('models', 'new', 'deeper', 'x.yml'),
      at('seeds', 'a.csv'),
      at('.env'),
    ])
      expect({ path, ignored: ignored(project, undefined, path) }).toEqual({
        path,
        ignored: false,
      });
  });

  it('leaves out a data folder inside the project, or every build would start the next', () => {
    const data = at('.data');
    expect(ignored(project, data, data)).toBe(true);
    expect(ignored(project, data, join(data, 'builds', 'x.duckdb'))).toBe(true);
    expect(ignored(project, data, at('.data-old', 'notes.md'))).toBe(false);
    expect(ignored(project, '/var/lib/drey', at('models', 'a.sql'))).toBe(false);
  });

  it("leaves out version control, dependencies and editors' scratch files", () => {
    for (const path of [
      at('.git', 'index'),
      at('node_modules', 'x', 'index.js'),
      at('models', '4913'),
      at('models', 'orders.sql~'),
      at('models', '.orders.sql.swp'),
      at('models', '.orders.sql.swx'),
      at('models', '.#orders.sql'),
      at('models', '#orders.sql#'),
    ])
      expect({ path, ignored: ignored(project, undefined, path) }).toEqual({ path, ignored: true });
  });
});
