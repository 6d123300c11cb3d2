import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkDatasetParameters } from '@/core/project/dataset-checks';
import {
  parseBuildSection,
  parseConnections,
  parseDashboards,
  parseDatasets,
  parseParameterNames,
} from '@/core/project/manifest-sections';
import { orderModels } from '@/core/project/model-graph';
import { checkParameterQueries } from '@/core/project/parameter-query-checks';
import { loadModelFiles } from '@/core/project/model-files';
import { Project } from '@/core/project/project';
import { parseParameterDefinitions } from '@/core/parameters/parse-definitions';
import { ProjectError, ProjectProblem, Problems } from '@/core/project-errors';
import { parseUserFields } from '@/core/user-fields';
import { checkKeys, FileContext, isMapping } from '@/core/project/yaml-fields';
import { readYaml } from '@/core/project/yaml-file';

const MANIFEST = 'project.yml';
const NAME = /^[a-z][a-z0-9_-]{0,62}$/;
const MANIFEST_KEYS = [
  'name',
  'label',
  'description',
  'major_version',
  'user_fields',
  'connections',
  'parameters',
  'datasets',
  'dashboards',
  'build',
];

export { readYaml };

/**
 * Loads and validates the project folder: the manifest, the models under `models/` and the seeds under
 * `seeds/`. Pure apart from reading files; throws {@link ProjectError} carrying every problem found.
 */
export function loadProject(dirInput: string): Project {
  const { problems, project } = readProject(dirInput);
  if (problems.length > 0 || !project) throw new ProjectError(problems);
  return project;
}

/** A project folder as read: every problem, and the project assembled from the parts that loaded. */
export interface ProjectReading {
  problems: ProjectProblem[];
  /** Undefined when project.yml itself does not read; else whole when there is no problem. */
  project?: Project;
  /** Every parameter name written in project.yml, those that did not parse included. */
  declaredParameters: string[];
  /** The SQL files of the models whose .yml does not parse: left out, so their SQL is not checked. */
  unreadSql?: string[];
  /** The datasets left out because their model's .yml does not parse. */
  unreadDatasets?: string[];
}

/**
 * Reads the project folder as {@link loadProject} does, without throwing: `validate` checks the SQL of the
 * parts that loaded in the same run as it reports the others' problems.
 */
export function readProject(dirInput: string): ProjectReading {
  const dir = resolve(dirInput);
  const problems = new Problems();
  if (!existsSync(dir)) {
    return {
      problems: [{ file: dir, path: '', message: 'project folder not found' }],
      declaredParameters: [],
    };
  }
  const manifest = readYaml(dir, MANIFEST, problems);
  if (problems.list.length > 0) return { problems: problems.list, declaredParameters: [] };
  if (!isMapping(manifest)) {
    return {
      problems: [{ file: MANIFEST, path: '', message: 'must be a mapping' }],
      declaredParameters: [],
    };
  }
  const at: FileContext = { file: MANIFEST, problems };

  const name = manifest.name;
  const nameOk = typeof name === 'string' && NAME.test(name);
  if (!nameOk) {
    problems.add(MANIFEST, 'name', 'must be a lowercase name (letters, digits, _ or -)');
  }
  const label = manifest.label ?? name;
  if (typeof label !== 'string') problems.add(MANIFEST, 'label', 'must be a string');
  const description = manifest.description ?? '';
  if (typeof description !== 'string') problems.add(MANIFEST, 'description', 'must be a string');
  const majorVersion = manifest.major_version;
  const majorOk =
    typeof majorVersion === 'number' && Number.isInteger(majorVersion) && majorVersion >= 0;
  if (!majorOk) problems.add(MANIFEST, 'major_version', 'must be a whole number from 0 up');
  checkKeys(at, '', manifest, MANIFEST_KEYS);
  const userFields = parseUserFields(manifest.user_fields, MANIFEST, problems);
  const connections = parseConnections(at, manifest.connections);
  const schedule = parseBuildSection(at, manifest.build);
  const parameters = parseParameterNames(at, manifest.parameters);

  const files = loadModelFiles(dir, problems);
  // A model whose .yml does not parse is left out; what names it is not reported as naming no model (that
  // would only repeat the syntax error), and every other problem still is.
  const unread = new Set(files.unread.keys());
  const models = orderModels(files.loaded, connections, problems, unread);
  const modelNames = new Set(models.map((model) => model.name));
  const parsedDatasets = parseDatasets(
    at,
    manifest.datasets,
    parameters.names,
    new Set([...modelNames, ...unread]),
  );
  const datasets = parsedDatasets.filter((dataset) => modelNames.has(dataset.model));
  const rawDatasets = Array.isArray(manifest.datasets) ? (manifest.datasets as unknown[]) : [];
  checkDatasetParameters(at, datasets, models, (dataset) =>
    rawDatasets.findIndex((raw) => isMapping(raw) && raw.name === dataset),
  );
  const dashboards = parseDashboards(at, manifest.dashboards, parameters.names, dir);
  const parameterSpecs = parseParameterDefinitions(parameters.definitions, {
    file: MANIFEST,
    userFields,
    problems,
  });
  checkParameterQueries(at, parameterSpecs, models, unread);

  return {
    problems: problems.list,
    unreadSql: [...files.unread.values()].filter((file): file is string => file !== undefined),
    unreadDatasets: parsedDatasets
      .filter((dataset) => unread.has(dataset.model))
      .map((dataset) => dataset.name),
    declaredParameters: parameters.definitions
      .map((raw) => (isMapping(raw) ? raw.name : undefined))
      .filter((raw): raw is string => typeof raw === 'string'),
    project: {
      dir,
      manifestFile: MANIFEST,
      name: nameOk ? name : 'project',
      label: typeof label === 'string' ? label : '',
      description: typeof description === 'string' ? description : '',
      majorVersion: majorOk ? majorVersion : 0,
      userFields,
      connections,
      models,
      parameterDefinitions: parameters.definitions,
      parameters: parameterSpecs,
      datasets,
      dashboards,
      schedule,
    },
  };
}

/**
 * The project's name alone, from project.yml: what names its data folder, for a command that does not need
 * the whole project (and should work while a model is broken). Throws {@link ProjectError} as the loader
 * would for the manifest.
 */
export function readProjectName(dirInput: string): string {
  const dir = resolve(dirInput);
  const problems = new Problems();
  if (!existsSync(dir)) {
    throw new ProjectError([{ file: dir, path: '', message: 'project folder not found' }]);
  }
  const manifest = readYaml(dir, MANIFEST, problems);
  problems.throwIfAny();
  const name = isMapping(manifest) ? manifest.name : undefined;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ProjectError([
      {
        file: MANIFEST,
        path: 'name',
        message: 'must be a lowercase name (letters, digits, _ or -)',
      },
    ]);
  }
  return name;
}

export { ProjectError };
