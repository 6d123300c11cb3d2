import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { Problems } from '@/core/project/project-errors';

/** Reads a YAML file; a syntax error becomes a problem naming the line. */
export function readYaml(dir: string, file: string, problems: Problems): unknown {
  const path = join(dir, file);
  if (!existsSync(path)) {
    problems.add(file, '', 'file not found');
    return undefined;
  }
  const document = parseDocument(readFileSync(path, 'utf8'), { prettyErrors: true });
  if (document.errors.length > 0) {
    for (const error of document.errors) {
      const line = error.linePos?.[0]?.line;
      problems.add(file, line ? `line ${line}` : '', error.message.split('\n', 1)[0]);
    }
    return undefined;
  }
  return document.toJSON() as unknown;
}
