import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { parseColumns } from '@/core/project/columns';
import type { Model, SeedModel, SourceModel } from '@/core/project/project';
import { Problems } from '@/core/project-errors';
import { FoundRef, findRefs, templateSyntaxError } from '@/core/project/sql-template-check';
import {
  checkKeys,
  FileContext,
  isMapping,
  Mapping,
  oneOf,
  optionalText,
  SNAKE_NAME,
} from '@/core/project/yaml-fields';
import { readYaml } from '@/core/project/yaml-file';

export const MODELS_DIR = 'models';
export const SEEDS_DIR = 'seeds';

/** A model as read from its files, with the lines of its refs for later problem messages. */
export interface LoadedModel {
  model: Model;
  refLines: FoundRef[];
  /** The file problems about refs are reported against. */
  refFile: string;
}

type FileGroup = Partial<Record<'sql' | 'yml' | 'csv', string>>;

/** Files under `folder`, grouped by name without extension: `models/a/b.sql` and `b.yml` form `b`. */
function groupFiles(dir: string, folder: string, problems: Problems): Map<string, FileGroup> {
  const groups = new Map<string, FileGroup>();
  const root = join(dir, folder);
  if (!existsSync(root) || !statSync(root).isDirectory()) return groups;
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => statSync(join(root, file)).isFile())
    .sort();
  for (const file of files) {
    const extension = extname(file).toLowerCase();
    const role =
      extension === '.sql'
        ? 'sql'
        : extension === '.csv'
          ? 'csv'
          : /^\.ya?ml$/.test(extension)
            ? 'yml'
            : undefined;
    if (!role) continue;
    const path = join(folder, file);
    const name = basename(file, extname(file));
    const group = groups.get(name) ?? {};
    const previous = group[role];
    if (previous) {
      problems.add(path, '', `model name "${name}" is also used by ${previous}`);
      continue;
    }
    group[role] = path;
    groups.set(name, group);
  }
  return groups;
}

function readSql(dir: string, file: string): string {
  return readFileSync(join(dir, file), 'utf8');
}

function readMetadata(dir: string, file: string, problems: Problems): Mapping | undefined {
  const raw = readYaml(dir, file, problems);
  if (raw === undefined) return undefined;
  if (raw === null) return {};
  if (!isMapping(raw)) {
    problems.add(file, '', 'must be a mapping');
    return undefined;
  }
  return raw;
}

/** Checks a template's syntax and literal refs; returns the refs found. */
function templateRefs(file: string, sql: string, problems: Problems): FoundRef[] {
  const syntax = templateSyntaxError(sql, file);
  if (syntax) problems.add(file, syntax.line ? `line ${syntax.line}` : '', syntax.message);
  const { refs, dynamic } = findRefs(sql);
  for (const line of dynamic) {
    problems.add(file, `line ${line}`, "ref() takes the model's name in quotes: ref('name')");
  }
  return refs;
}

const TABLE_PART = /^[A-Za-z_][A-Za-z0-9_$]*$/;

function parseSource(
  at: FileContext,
  common: Pick<SourceModel, 'name' | 'description' | 'columns' | 'metadataFile'>,
  meta: Mapping,
  sqlFile: string | undefined,
  sql: string | undefined,
): SourceModel | undefined {
  const connection = meta.connection;
  if (typeof connection !== 'string') {
    at.problems.add(at.file, 'connection', 'must name one of the connections of project.yml');
  }
  let table: string[] | undefined;
  if (meta.table !== undefined) {
    const parts = typeof meta.table === 'string' ? meta.table.split('.') : [];
    if (parts.length < 1 || parts.length > 2 || !parts.every((part) => TABLE_PART.test(part))) {
      at.problems.add(
        at.file,
        'table',
        'must be a table name, optionally with its schema: schema.table',
      );
    } else {
      table = parts;
    }
  }
  if ((meta.table === undefined) === (sqlFile === undefined)) {
    at.problems.add(
      at.file,
      'table',
      `a source names a table or has a ${common.name}.sql query on its connection, exactly one of the two`,
    );
  }
  if (typeof connection !== 'string') return undefined;
  const model: SourceModel = { ...common, kind: 'source', connection };
  if (table) model.table = table;
  if (sqlFile !== undefined && sql !== undefined) {
    model.sqlFile = sqlFile;
    model.sql = sql;
  }
  return model;
}

function loadModelGroup(
  dir: string,
  name: string,
  group: FileGroup,
  problems: Problems,
): LoadedModel | undefined {
  const { sql: sqlFile, yml: ymlFile } = group;
  if (group.csv) problems.add(group.csv, '', 'CSV files belong in seeds/, not in models/');
  if (!ymlFile) {
    if (!sqlFile) return undefined;
    problems.add(sqlFile, '', `needs a ${name}.yml beside it that says at least the model's kind`);
    return undefined;
  }
  const at: FileContext = { file: ymlFile, problems };
  const meta = readMetadata(dir, ymlFile, problems);
  if (!meta) return undefined;
  checkKeys(at, '', meta, ['kind', 'description', 'connection', 'table', 'columns']);
  const kind = oneOf(at, 'kind', meta.kind, ['build', 'runtime', 'dbview', 'source'] as const);
  const common = {
    name,
    description: optionalText(at, 'description', meta.description),
    columns: parseColumns(at, meta.columns),
    metadataFile: ymlFile,
  };
  if (kind === undefined) return undefined;
  if (kind !== 'source' && kind !== 'dbview' && meta.connection !== undefined) {
    problems.add(ymlFile, 'connection', 'is only for source and dbview models');
  }
  if (kind !== 'source' && meta.table !== undefined) {
    problems.add(ymlFile, 'table', 'is only for source models');
  }
  const sql = sqlFile ? readSql(dir, sqlFile) : undefined;
  if (kind === 'source') {
    const model = parseSource(at, common, meta, sqlFile, sql);
    return model && { model, refLines: [], refFile: sqlFile ?? ymlFile };
  }
  if (!sqlFile || sql === undefined) {
    problems.add(ymlFile, '', `a ${kind} model needs its SQL in ${name}.sql beside this file`);
    return undefined;
  }
  const refLines = templateRefs(sqlFile, sql, problems);
  const refs = [...new Set(refLines.map((ref) => ref.name))];
  const template = { ...common, sql, sqlFile, refs };
  if (kind === 'dbview') {
    if (typeof meta.connection !== 'string') {
      problems.add(ymlFile, 'connection', 'must name one of the connections of project.yml');
      return undefined;
    }
    return {
      model: { ...template, kind, connection: meta.connection },
      refLines,
      refFile: sqlFile,
    };
  }
  return { model: { ...template, kind }, refLines, refFile: sqlFile };
}

/** The header of a CSV file, to check declared column names against. */
function csvHeader(dir: string, file: string): string[] {
  const text = readFileSync(join(dir, file), 'utf8');
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  return firstLine.split(',').map((cell) => cell.trim().replace(/^"(.*)"$/, '$1'));
}

function loadSeedGroup(
  dir: string,
  name: string,
  group: FileGroup,
  problems: Problems,
): LoadedModel | undefined {
  const { csv: csvFile, yml: ymlFile } = group;
  if (group.sql) problems.add(group.sql, '', 'SQL files belong in models/, not in seeds/');
  if (!csvFile) {
    if (ymlFile) problems.add(ymlFile, '', `describes a seed but ${name}.csv is missing`);
    return undefined;
  }
  const seed: SeedModel = { kind: 'seed', name, csvFile, description: '', columns: [] };
  if (ymlFile) {
    const at: FileContext = { file: ymlFile, problems };
    const meta = readMetadata(dir, ymlFile, problems);
    if (!meta) return undefined;
    checkKeys(at, '', meta, ['description', 'columns']);
    seed.description = optionalText(at, 'description', meta.description);
    seed.columns = parseColumns(at, meta.columns);
    seed.metadataFile = ymlFile;
    const header = csvHeader(dir, csvFile);
    seed.columns.forEach((column, index) => {
      if (!header.includes(column.name)) {
        problems.add(
          ymlFile,
          `columns[${index}].name`,
          `${csvFile} has no column "${column.name}"`,
        );
      }
    });
  }
  return { model: seed, refLines: [], refFile: csvFile };
}

/** What `seeds/` and `models/` hold. */
export interface ModelFiles {
  loaded: LoadedModel[];
  /**
   * The models whose .yml does not parse, by name, with their SQL file (none for a seed): they are missing
   * from `loaded`, and what refs them is not reported as naming no model.
   */
  unread: Map<string, string | undefined>;
}

/** Reads `seeds/` and `models/`; every problem is collected, none thrown. */
export function loadModelFiles(dir: string, problems: Problems): ModelFiles {
  const loaded: LoadedModel[] = [];
  const unread = new Map<string, string | undefined>();
  const owners = new Map<string, string>();
  const folders = [
    { folder: SEEDS_DIR, load: loadSeedGroup },
    { folder: MODELS_DIR, load: loadModelGroup },
  ];
  for (const { folder, load } of folders) {
    for (const [name, group] of groupFiles(dir, folder, problems)) {
      const file = group.sql ?? group.csv ?? group.yml ?? name;
      if (!SNAKE_NAME.test(name)) {
        problems.add(file, '', 'the file name must be a snake_case model name (a-z, 0-9 and _)');
        continue;
      }
      const owner = owners.get(name);
      if (owner) {
        problems.add(file, '', `model name "${name}" is also used by ${owner}`);
        continue;
      }
      owners.set(name, file);
      const model = load(dir, name, group, problems);
      if (model) loaded.push(model);
      else if (group.yml && problems.unparsed.has(group.yml)) {
        unread.set(name, folder === MODELS_DIR ? group.sql : undefined);
      }
    }
  }
  return { loaded, unread };
}
