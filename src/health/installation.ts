import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Whether the installation this process was started from is still the one on disk. No Nest here.
 *
 * A process keeps running the code it loaded, but a module it loads later (a lazy `import()`, a library's own
 * lazy `require`) comes from disk: after `git pull && npm ci` in the same checkout it may be missing for a
 * while (npm ci deletes node_modules first) or be of another version. Seen: PNG dashboards answering 503
 * "Cannot find module 'puppeteer-core'" on replicas that still said they were ready. So readiness compares
 * the installation's identity now with the one taken at start, and asks for a restart when they differ.
 *
 * The identity is two files that every install and every build rewrite: npm's record of what node_modules
 * holds (`node_modules/.package-lock.json`, written by `npm ci` and `npm install`) and tsc's record of the
 * build (`dist/.tsbuildinfo`, written by `nest build`, which `npm ci` runs through `prepare`). Their contents
 * are compared, not their times: `npm start` touches the build record without changing it, and a reinstall
 * of the same versions changes nothing this process could notice.
 */
export function installationFiles(root: string): string[] {
  return [join(root, 'node_modules', '.package-lock.json'), join(root, 'dist', '.tsbuildinfo')];
}

const ABSENT = 'absent';
/** Read in pieces of this size, so that a file of any size is hashed in bounded memory. */
const CHUNK = 64 * 1024;
/** Hashing stops here (the two files are under 1 MB today); beyond it, the size and time stand in for the rest. */
const MAX_HASHED_BYTES = 64 * 1024 * 1024;

interface Fingerprint {
  /** What stat says; the content is hashed again only when this changes (readiness is asked every 2 s). */
  stamp: string;
  hash: string;
}

export class InstallationWatch {
  private readonly atStart = new Map<string, string>();
  private readonly lastSeen = new Map<string, Fingerprint>();

  constructor(
    private readonly root: string,
    private readonly files: string[] = installationFiles(root),
  ) {
    for (const file of files) this.atStart.set(file, this.fingerprint(file));
  }

  /** The files (relative to the installation's root) that differ from what they were at start; empty if none. */
  changed(): string[] {
    return this.files
      .filter((file) => this.fingerprint(file) !== this.atStart.get(file))
      .map((file) => relative(this.root, file));
  }

  private fingerprint(file: string): string {
    let stamp: string;
    try {
      const stat = statSync(file);
      stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch {
      return ABSENT;
    }
    const seen = this.lastSeen.get(file);
    if (seen?.stamp === stamp) return seen.hash;
    const hash = hashFile(file, stamp);
    this.lastSeen.set(file, { stamp, hash });
    return hash;
  }
}

function hashFile(file: string, stamp: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return ABSENT;
  }
  try {
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(CHUNK);
    let total = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK, null);
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
      total += read;
      if (total >= MAX_HASHED_BYTES) {
        hash.update(stamp);
        break;
      }
    }
    return hash.digest('hex');
  } catch {
    return ABSENT;
  } finally {
    closeSync(fd);
  }
}
