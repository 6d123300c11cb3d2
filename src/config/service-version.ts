import { readFileSync } from 'node:fs';
import { join } from 'node:path';

function readVersion(): string {
  // package.json sits two folders above both src/config and dist/config.
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** The service's own package version (`service_version` of `GET P`). */
export const SERVICE_VERSION = readVersion();
