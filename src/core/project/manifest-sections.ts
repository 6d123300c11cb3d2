import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import type {
  ConnectionKind,
  ConnectionSpec,
  DashboardFormat,
  DashboardSpec,
  DatasetSpec,
  Scope,
} from '@/core/project/project';
import { BuildSchedule, patternProblem, zoneProblem } from '@/core/project/build-schedule';
import {
  checkKeys,
  eachMapping,
  isMapping,
  FileContext,
  namesFrom,
  oneOf,
  optionalText,
  pathOf,
  requiredName,
  UniqueNames,
} from '@/core/project/yaml-fields';

const CONNECTION_KINDS: readonly ConnectionKind[] = ['postgres'];
const SCOPES: readonly Scope[] = ['public', 'protected', 'private'];
const FORMATS: readonly DashboardFormat[] = ['html', 'png'];
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

export function parseConnections(at: FileContext, raw: unknown): ConnectionSpec[] {
  const connections: ConnectionSpec[] = [];
  const names = new UniqueNames('connection');
  eachMapping(at, 'connections', raw, (item, path) => {
    checkKeys(at, path, item, ['name', 'kind', 'url_env', 'description']);
    const name = requiredName(at, pathOf(path, 'name'), item.name);
    const kind = oneOf(at, pathOf(path, 'kind'), item.kind, CONNECTION_KINDS);
    const urlEnv = item.url_env;
    if (typeof urlEnv !== 'string' || !ENV_NAME.test(urlEnv)) {
      at.problems.add(
        at.file,
        pathOf(path, 'url_env'),
        'must name the environment variable holding the URL (upper case, for example WAREHOUSE_URL)',
      );
    }
    const description = optionalText(at, pathOf(path, 'description'), item.description);
    if (name === undefined || kind === undefined || typeof urlEnv !== 'string') return;
    if (!names.claim(at, pathOf(path, 'name'), name)) return;
    connections.push({ name, kind, urlEnv, description });
  });
  return connections;
}

/**
 * Checks only what the rest of the manifest relies on: every parameter has a unique name. The parameters
 * domain validates the definitions themselves.
 */
export function parseParameterNames(
  at: FileContext,
  raw: unknown,
): { definitions: unknown[]; names: ReadonlySet<string> } {
  const names = new UniqueNames('parameter');
  if (raw === undefined || raw === null) return { definitions: [], names: names.all() };
  eachMapping(at, 'parameters', raw, (item, path) => {
    const name = requiredName(at, pathOf(path, 'name'), item.name);
    if (name !== undefined) names.claim(at, pathOf(path, 'name'), name);
  });
  return { definitions: Array.isArray(raw) ? (raw as unknown[]) : [], names: names.all() };
}

interface Published {
  name: string;
  label: string;
  description: string;
  scope: Scope;
  parameters: string[];
}

function parsePublished(
  at: FileContext,
  path: string,
  item: Record<string, unknown>,
  parameterNames: ReadonlySet<string>,
): Published | undefined {
  const name = requiredName(at, pathOf(path, 'name'), item.name);
  const label = optionalText(at, pathOf(path, 'label'), item.label, name ?? '');
  const description = optionalText(at, pathOf(path, 'description'), item.description);
  const scope = oneOf(at, pathOf(path, 'scope'), item.scope ?? 'public', SCOPES);
  const parameters = namesFrom(
    at,
    pathOf(path, 'parameters'),
    item.parameters,
    parameterNames,
    'parameter',
  );
  if (name === undefined || scope === undefined) return undefined;
  return { name, label, description, scope, parameters };
}

export function parseDatasets(
  at: FileContext,
  raw: unknown,
  parameterNames: ReadonlySet<string>,
  modelNames: ReadonlySet<string>,
): DatasetSpec[] {
  const datasets: DatasetSpec[] = [];
  const names = new UniqueNames('dataset');
  eachMapping(at, 'datasets', raw, (item, path) => {
    checkKeys(at, path, item, ['name', 'label', 'description', 'scope', 'parameters', 'model']);
    const published = parsePublished(at, path, item, parameterNames);
    const model = item.model ?? published?.name;
    if (typeof model !== 'string') {
      at.problems.add(at.file, pathOf(path, 'model'), 'must name a model');
    } else if (!modelNames.has(model)) {
      at.problems.add(at.file, pathOf(path, 'model'), `no model named "${model}"`);
    }
    if (!published || typeof model !== 'string' || !modelNames.has(model)) return;
    if (!names.claim(at, pathOf(path, 'name'), published.name)) return;
    datasets.push({ ...published, model });
  });
  return datasets;
}

/** A template path must stay inside the project, so a dashboard cannot read other files. */
function insideProject(file: string): boolean {
  if (isAbsolute(file)) return false;
  const relative = normalize(file);
  return relative !== '..' && !relative.startsWith(`..${sep}`);
}

export function parseDashboards(
  at: FileContext,
  raw: unknown,
  parameterNames: ReadonlySet<string>,
  dir: string,
): DashboardSpec[] {
  const dashboards: DashboardSpec[] = [];
  const names = new UniqueNames('dashboard');
  eachMapping(at, 'dashboards', raw, (item, path) => {
    checkKeys(at, path, item, [
      'name',
      'label',
      'description',
      'scope',
      'format',
      'parameters',
      'template',
    ]);
    const published = parsePublished(at, path, item, parameterNames);
    const format = oneOf(at, pathOf(path, 'format'), item.format ?? 'html', FORMATS);
    const template = item.template;
    let templateOk = false;
    if (typeof template !== 'string' || template === '') {
      at.problems.add(at.file, pathOf(path, 'template'), 'must be the path of a template file');
    } else if (!insideProject(template)) {
      at.problems.add(at.file, pathOf(path, 'template'), 'must be a path inside the project');
    } else if (!existsSync(join(dir, template)) || !statSync(join(dir, template)).isFile()) {
      at.problems.add(at.file, pathOf(path, 'template'), `file "${template}" not found`);
    } else {
      templateOk = true;
    }
    if (!published || format === undefined || !templateOk) return;
    if (!names.claim(at, pathOf(path, 'name'), published.name)) return;
    dashboards.push({ ...published, format, template: normalize(template as string) });
  });
  return dashboards;
}

/**
 * `build:`, how the project is rebuilt by itself: `schedule`, a cron pattern, read in `timezone` (UTC unless
 * given). Undefined when the project has no schedule.
 */
export function parseBuildSection(at: FileContext, raw: unknown): BuildSchedule | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isMapping(raw)) {
    at.problems.add(at.file, 'build', 'must be a mapping (schedule, timezone)');
    return undefined;
  }
  checkKeys(at, 'build', raw, ['schedule', 'timezone']);
  if (raw.schedule === undefined || raw.schedule === null) return undefined;
  if (typeof raw.schedule !== 'string') {
    at.problems.add(
      at.file,
      'build.schedule',
      'must be a cron pattern in quotes, e.g. "0 6 * * *"',
    );
    return undefined;
  }
  const timezone = optionalText(at, 'build.timezone', raw.timezone, 'UTC');
  const badZone = zoneProblem(timezone);
  if (badZone) at.problems.add(at.file, 'build.timezone', badZone);
  // A pattern is read the same in every zone: with the zone wrong it is checked in UTC, so that a wrong
  // schedule is reported in the same run as the zone, not once the zone is fixed.
  const badPattern = patternProblem(raw.schedule, badZone ? 'UTC' : timezone);
  if (badPattern) at.problems.add(at.file, 'build.schedule', badPattern);
  if (badZone || badPattern) return undefined;
  return { pattern: raw.schedule.trim(), timezone };
}
