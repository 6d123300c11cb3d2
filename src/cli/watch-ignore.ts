import { basename, isAbsolute, relative, sep } from 'node:path';

/**
 * Paths whose changes are not the author's: version control, dependencies, the service's own data folder,
 * and editors' scratch files (vim's swap files and its `.swx` and `4913` probes, backups ending in `~`,
 * Emacs' locks). A scratch file would only start a needless check; the data folder, a rebuild loop.
 */
export function ignored(projectDir: string, dataDir: string | undefined, path: string): boolean {
  if (dataDir && within(dataDir, path)) return true;
  const inProject = relative(projectDir, path);
  if (!inProject || inProject.startsWith('..') || isAbsolute(inProject)) return false;
  if (inProject.split(sep).some((part) => part === '.git' || part === 'node_modules')) return true;
  const name = basename(path);
  return (
    name === '4913' ||
    name.endsWith('~') ||
    /\.sw[a-px]$/.test(name) ||
    name.startsWith('.#') ||
    (name.startsWith('#') && name.endsWith('#'))
  );
}

function within(folder: string, path: string): boolean {
  const inside = relative(folder, path);
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside));
}
