import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { Project } from '@/project/project';
import { ProjectError, Problems } from '@/project/project-errors';
import { parseUserFields } from '@/project/user-fields';

const MANIFEST = 'project.yml';
const NAME = /^[a-z][a-z0-9_-]{0,62}$/;

type Json = Record<string, unknown>;

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

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Loads and validates the project folder. Pure apart from reading files; throws {@link ProjectError}. */
export function loadProject(dirInput: string): Project {
  const dir = resolve(dirInput);
  const problems = new Problems();
  if (!existsSync(dir)) {
    throw new ProjectError([{ file: dir, path: '', message: 'project folder not found' }]);
  }
  const manifest = readYaml(dir, MANIFEST, problems);
  problems.throwIfAny();
  if (!isObject(manifest)) {
    throw new ProjectError([{ file: MANIFEST, path: '', message: 'must be a mapping' }]);
  }

  const name = manifest.name;
  if (typeof name !== 'string' || !NAME.test(name)) {
    problems.add(MANIFEST, 'name', 'must be a lowercase name (letters, digits, _ or -)');
  }
  const label = manifest.label ?? name;
  if (typeof label !== 'string') problems.add(MANIFEST, 'label', 'must be a string');
  const description = manifest.description ?? '';
  if (typeof description !== 'string') problems.add(MANIFEST, 'description', 'must be a string');
  const majorVersion = manifest.major_version;
  if (typeof majorVersion !== 'number' || !Number.isInteger(majorVersion) || majorVersion < 0) {
    problems.add(MANIFEST, 'major_version', 'must be a whole number from 0 up');
  }
  const userFields = parseUserFields(manifest.user_fields, MANIFEST, problems);
  problems.throwIfAny();

  return {
    dir,
    name: name as string,
    label: label as string,
    description: description as string,
    majorVersion: majorVersion as number,
    userFields,
  };
}

export { ProjectError };
