import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServerPaths } from '@/engine/server-paths';

describe('ServerPaths', () => {
  const paths = new ServerPaths({ dataDir: '/srv/drey/.data', projectDir: '/srv/projects/sales' });

  it.each([
    [
      'IO Error: Cannot open file "/srv/drey/.data/environments/b1.duckdb": No such file',
      'IO Error: Cannot open file "<DATA_DIR>/environments/b1.duckdb": No such file',
    ],
    [
      'No files found that match the pattern "/srv/projects/sales/seeds/orders.csv"',
      'No files found that match the pattern "seeds/orders.csv"',
    ],
    [
      `Permission Error: Cannot access directory "${join(homedir(), '.duckdb/extensions/v1.5.6/linux_amd64')}"`,
      'Permission Error: Cannot access directory "<home>/.duckdb/extensions/v1.5.6/linux_amd64"',
    ],
    [`temp_directory is ${join(tmpdir(), 'x.tmp')}`, 'temp_directory is <tmp>/x.tmp'],
    ["Cannot access file '/etc/passwd'", "Cannot access file '<path>'"],
    ['the folder /srv/drey/.data itself', 'the folder <DATA_DIR> itself'],
  ])('scrubs %j', (message, scrubbed) => {
    expect(paths.scrub(message)).toBe(scrubbed);
  });

  it.each([
    'See also https://duckdb.org/docs/stable/guides/performance/how_to_tune_workloads',
    'LINE 1: SELECT a/b/c FROM t',
    'SELECT 1 / 2',
    'failed to allocate data of size 128.0 MiB (128.0 MiB/244.1 MiB used)',
  ])('leaves %j as it is', (message) => {
    expect(paths.scrub(message)).toBe(message);
  });

  it('does not take a longer folder for a known one', () => {
    expect(paths.scrub('/srv/drey/.database/x')).toBe('<path>');
  });
});
