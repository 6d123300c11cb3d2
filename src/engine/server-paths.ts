import { homedir, tmpdir } from 'node:os';

/**
 * An absolute path of two segments or more that no word, dot, colon or slash precedes: `/etc/passwd`,
 * `"/srv/drey/.data/environments/b1.duckdb"`, but not the path of a URL (`https://duckdb.org/docs/...`)
 * nor a division (`a/b/c`).
 */
const ABSOLUTE_PATH = /(?<![\w.:/~<>-])\/(?:[\w.@%+=,~-]+\/)+[\w.@%+=,~*-]*/g;

/**
 * Takes the server's own paths out of a message that reaches a client (an engine error: DuckDB names the
 * files it cannot read, the database it cannot open, its extension folder under the service user's home).
 * Known folders become a name (`<DATA_DIR>`), a path in the project becomes relative to it, and any other
 * absolute path becomes `<path>`.
 */
export class ServerPaths {
  private readonly roots: { pattern: RegExp; as: string }[];

  constructor(folders: { dataDir: string; projectDir: string }) {
    const roots = [
      { path: folders.projectDir, as: '' },
      { path: folders.dataDir, as: '<DATA_DIR>' },
      { path: tmpdir(), as: '<tmp>' },
      { path: homedir(), as: '<home>' },
      { path: process.cwd(), as: '' },
    ];
    // The most specific first: DATA_DIR is often under the working directory, which may be under home.
    this.roots = roots
      .map((root) => ({ path: root.path.replace(/\/+$/, ''), as: root.as }))
      .filter((root) => root.path.length > 1)
      .sort((a, b) => b.path.length - a.path.length)
      .map(({ path, as }) => ({
        // The folder itself, or followed by a slash; not `/rooted` for `/root`.
        pattern: new RegExp(
          `${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(/|(?![\\w.@%+=,~-]))`,
          'g',
        ),
        as,
      }));
  }

  scrub(text: string): string {
    let scrubbed = text;
    for (const { pattern, as } of this.roots) {
      // `<root>/x` becomes `<name>/x`, or `x` when relative; the folder itself its name, or `.`.
      scrubbed = scrubbed.replace(pattern, (_match, slash: string) =>
        slash ? (as ? `${as}/` : '') : as || '.',
      );
    }
    return scrubbed.replace(ABSOLUTE_PATH, '<path>');
  }
}
