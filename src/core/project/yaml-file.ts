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
    // After the first syntax error the parser is lost, and what it reports next follows from that one
    // (a missing ] gives three more "errors" a few lines on): the first is the one to fix.
    const [error] = document.errors;
    const place = error.linePos?.[0];
    // Its message repeats the place and ends with an excerpt of the file: the place is said once.
    const message = error.message
      .split('\n', 1)[0]
      .replace(/ at line \d+, column \d+:?$/, '')
      .replace(/:$/, '');
    problems.add(file, place ? `line ${place.line}, column ${place.col}` : '', message);
    return undefined;
  }
  return document.toJSON() as unknown;
}
