import { didYouMean } from '@/core/did-you-mean';
import { Problems } from '@/core/project-errors';

/** Snake_case names of models, datasets, dashboards, parameters and connections. */
export const SNAKE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

export type Mapping = Record<string, unknown>;

/** Where values being checked come from: problems are reported against this file. */
export interface FileContext {
  file: string;
  problems: Problems;
}

export function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function pathOf(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base ? `${base}.${key}` : key;
}

/** Reports keys the format does not know, so that a typo (`descripton`) is not silently ignored. */
export function checkKeys(at: FileContext, base: string, item: Mapping, known: readonly string[]) {
  for (const key of Object.keys(item)) {
    if (!known.includes(key)) {
      at.problems.add(at.file, pathOf(base, key), `is not a known key${didYouMean(key, known)}`);
    }
  }
}

export function optionalText(at: FileContext, path: string, value: unknown, fallback = ''): string {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') {
    at.problems.add(at.file, path, 'must be a string');
    return fallback;
  }
  return value;
}

export function requiredName(at: FileContext, path: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || !SNAKE_NAME.test(value)) {
    at.problems.add(
      at.file,
      path,
      'must be a snake_case name (a-z, 0-9 and _, starting with a letter)',
    );
    return undefined;
  }
  return value;
}

export function oneOf<T extends string>(
  at: FileContext,
  path: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
    return value as T;
  at.problems.add(at.file, path, `must be one of ${allowed.join(', ')}`);
  return undefined;
}

/** A list of names, each one of `known`; reports unknown and repeated names. */
export function namesFrom(
  at: FileContext,
  path: string,
  value: unknown,
  known: ReadonlySet<string>,
  what: string,
): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    at.problems.add(at.file, path, `must be a list of ${what} names`);
    return [];
  }
  const names: string[] = [];
  value.forEach((entry: unknown, index) => {
    const at2 = pathOf(path, index);
    if (typeof entry !== 'string') {
      at.problems.add(at.file, at2, `must be a ${what} name`);
    } else if (!known.has(entry)) {
      at.problems.add(at.file, at2, `no ${what} named "${entry}"`);
    } else if (names.includes(entry)) {
      at.problems.add(at.file, at2, `"${entry}" is listed twice`);
    } else {
      names.push(entry);
    }
  });
  return names;
}

/** Iterates a list of mappings, reporting entries that are not mappings. */
export function eachMapping(
  at: FileContext,
  path: string,
  value: unknown,
  visit: (item: Mapping, path: string) => void,
): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value)) {
    at.problems.add(at.file, path, 'must be a list');
    return;
  }
  value.forEach((entry: unknown, index) => {
    const itemPath = pathOf(path, index);
    if (!isMapping(entry)) at.problems.add(at.file, itemPath, 'must be a mapping');
    else visit(entry, itemPath);
  });
}

/** Reports a second definition of one name within a list. */
export class UniqueNames {
  private readonly seen = new Set<string>();

  constructor(private readonly what: string) {}

  claim(at: FileContext, path: string, name: string): boolean {
    if (this.seen.has(name)) {
      at.problems.add(at.file, path, `${this.what} "${name}" is defined twice`);
      return false;
    }
    this.seen.add(name);
    return true;
  }

  has(name: string): boolean {
    return this.seen.has(name);
  }

  all(): ReadonlySet<string> {
    return this.seen;
  }
}
