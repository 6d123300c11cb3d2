// @ts-check
'use strict';
// Compiles the service (`nest build`) only when dist/ is missing or older than the sources: `npm start` and
// `npm run dev` both start from dist/, and a full `nest build` takes 30-60 s where this check takes a
// fraction of a second. `npm ci` already compiles (the `prepare` script), so a fresh clone starts at once; a
// developer who edits src/ gets a build of the edit. Run as a script (`node scripts/ensure-built.js`, as
// `npm run dev` does) or required (`scripts/start.js`).
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, rmSync, statSync, utimesSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const MAIN = join(ROOT, 'dist', 'main.js');
// tsc's incremental state, written by every `nest build` (tsconfig.json's tsBuildInfoFile): the time of the
// last build. dist/main.js itself is not rewritten when only other files change.
const BUILD_INFO = join(ROOT, 'dist', '.tsbuildinfo');
// What the build reads: the sources (not the unit specs, which it leaves out) and its configuration.
const CONFIG = ['tsconfig.json', 'nest-cli.json'].map((file) => join(ROOT, file));

/** The newest modification time of the build's inputs, in ms. */
function newestSource() {
  let newest = Math.max(...CONFIG.map((file) => statSync(file).mtimeMs));
  const walk = (/** @type {string} */ dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        newest = Math.max(newest, statSync(path).mtimeMs);
      }
    }
  };
  walk(join(ROOT, 'src'));
  return newest;
}

/** Why a build is needed, or undefined when dist/ is up to date. */
function staleness() {
  if (!existsSync(MAIN) || !existsSync(BUILD_INFO)) return 'dist/ has no complete build';
  if (newestSource() > statSync(BUILD_INFO).mtimeMs) return 'sources changed since the last build';
  return undefined;
}

/**
 * Builds when dist/ is stale, saying why on stderr as `<who>: ...`; exits with the build's status when it
 * fails.
 */
function ensureBuilt(/** @type {string} */ who) {
  const reason = staleness();
  if (!reason) return;
  process.stderr.write(`${who}: ${reason}; compiling (nest build)\n`);
  // Without dist/main.js, tsc's incremental state would let it skip files it believes emitted.
  if (!existsSync(MAIN)) rmSync(BUILD_INFO, { force: true });
  const nest = join(ROOT, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js');
  const build = spawnSync(process.execPath, [nest, 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  // A build that found nothing to emit may leave the state file as it was: mark the sources as built.
  const now = new Date();
  utimesSync(BUILD_INFO, now, now);
}

module.exports = { ensureBuilt, MAIN };

if (require.main === module) ensureBuilt(process.argv[2] ?? 'drey');
