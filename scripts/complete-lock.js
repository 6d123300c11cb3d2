#!/usr/bin/env node
// The npm registry this project is developed against serves only the Linux x64 builds of packages with
// per-platform binaries (DuckDB, msgpackr, ...), so `npm install` writes a lock file without the other
// platforms' optional packages, and `npm ci` then refuses it as "out of sync". This adds those entries back,
// marked optional with the os/cpu their names state, so that npm skips them on other platforms as usual.
// Run it after `npm install` changes the lock file.
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = ['x64', 'arm64', 'arm', 'ia32', 'loong64', 'ppc64', 's390x', 'riscv64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.find((part) => CPU.includes(part)) ?? (parts.includes('gnueabihf') || parts.includes('musleabihf') ? 'arm' : undefined);
  const libc = parts.some((part) => part.startsWith('musl')) ? 'musl' : parts.includes('gnu') ? 'glibc' : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = location === '' ? '' : `${location}/`;
    const candidates = [`${base}node_modules/${name}`, `node_modules/${name}`];
    if (candidates.some((candidate) => packages[candidate])) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os || !cpu) continue;
    const stub = { version: spec.replace(/^[\^~=]/, ''), optional: true, os: [os], cpu: [cpu] };
    if (libc) stub.libc = [libc];
    packages[`node_modules/${name}`] = stub;
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
console.log(`complete-lock: added ${added} optional platform entries`);
