import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The folders of src/ as rooms and their imports as arrows: what docs/architecture.md draws. Rooms sit on
 * floors, lowest first: the framework-free core, the runtime every room uses, infrastructure, the HTTP edge,
 * the features each above those it uses, and the entry points that assemble them. An arrow may point down or
 * sideways; no arrows may form a cycle, nor may the imports between the files of one room, and the few that
 * point up are named here with their reason. (The core's own rule, that it imports nothing outside it, is an
 * eslint rule: `eslint.config.mjs`.)
 */
const FLOORS: string[][] = [
  // The framework-free domain.
  ['core'],
  // What every room uses: the logger, the request scope, shutdown, the heap policy, background threads, and
  // which errors are an outage of Postgres or Redis. On the core alone, so that infrastructure may use it.
  ['runtime'],
  // Infrastructure, free of HTTP: configuration (and the project it names), then what the features stand on.
  ['config'],
  ['database', 'cache', 'metrics'],
  ['engine'],
  // The parameter catalog of the environment served: on the engine alone, read by every feature that
  // takes selections (the parameter widgets, datasets, dashboards, the data catalog, builds, admin, MCP).
  ['parameter-catalog'],
  // The HTTP edge, over the infrastructure and under the features' controllers: what the legacy layout
  // changes (its rules, mappers, messages and paths), the HTTP plumbing, the OpenAPI document.
  ['legacy'],
  ['http'],
  ['openapi'],
  // Features, each on the ones it uses.
  ['audit'],
  ['users'],
  // Drey's own authorization server (the library's endpoints, its records, its access tokens): the caller
  // of one of its tokens is found by auth, like every other.
  ['oauth'],
  ['auth'],
  // The pages a person signs in on for the authorization server: checked as the login endpoint checks.
  ['sign-in'],
  ['parameter-widgets'],
  // Embedding tokens are tried on the parameter widgets before they are signed.
  ['datasets', 'embedding'],
  ['catalog', 'dashboards', 'builds'],
  ['admin', 'health', 'webhooks'],
  // The MCP server: the features above as tools.
  ['mcp'],
  // Entry points that assemble the rest: the application (src/*.ts) and the command line.
  ['.', 'cli'],
];

/** The HTTP edge: no room below it imports it, not even by an arrow UPWARD names. */
const EDGE = ['legacy', 'http', 'openapi'];

/**
 * The subfolders of each room that has some, on floors lowest first as the rooms are: an import between
 * them points down or sideways, never up, and there is no UPWARD for them. `.` is the room's root, the files
 * directly in its folder: on top where they assemble the subfolders, at the bottom where they are the
 * vocabulary the subfolders share.
 */
const SUBFLOORS: Record<string, string[][]> = {
  core: [
    // The vocabulary: domain errors, callers and their user fields, a project file's problems, listings,
    // timestamps, result built-ins.
    ['.'],
    ['users', 'parameters'],
    // A project holds parameters; its items and who may open them (scope) stand on both.
    ['project'],
    // An embedding token's claims, the caller it stands for and what it may ask of its item: on the
    // project's items and their scope.
    ['embedding'],
  ],
  engine: [
    // What the parts hand each other (SQL text, bound values, a query's result) and what they ask of the
    // process (native memory, files of processes that died).
    ['sql', 'process'],
    // An export's SQL, files and disk space, which DuckDB writes.
    ['export'],
    ['duckdb'],
    // On DuckDB: built environments, and external databases queried through it.
    ['environment', 'connections'],
    // SQL templates read the connections' environment.
    ['templating'],
    ['query'],
    ['check'],
    ['materialize'],
    // The engine, which assembles them.
    ['.'],
  ],
  http: [
    // HTML escaping, route paths, security headers.
    ['.'],
    ['access', 'input', 'reply'],
    // A request's id, log line and Host rule; its log line names the caller (access).
    ['request'],
    // What answers a request: the error filter and the fast route.
    ['errors', 'fast-route'],
  ],
  admin: [['dto'], ['.']],
  audit: [['dto'], ['.']],
  auth: [['dto', 'sso'], ['.']],
  dashboards: [['template'], ['render'], ['.']],
  database: [
    // What the tables stand on: one transaction around a service's steps, the token records kept per
    // process; beside them the migrations and the embedded database (PGlite in a thread of its own).
    ['transactions', 'token-records', 'migrations', 'embedded'],
    ['tables'],
    ['.'],
  ],
  datasets: [['results'], ['.']],
  embedding: [['dto'], ['.']],
  oauth: [['dto'], ['.']],
};

/** Arrows that point up a floor, each with its reason. At most two. */
const UPWARD: Record<string, string> = {};

const SRC = resolve(__dirname);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === '__fixtures__' ? [] : sources(path);
    return /\.ts$/.test(entry.name) && !/\.spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** The room of a file, its path relative to src/. */
function roomOf(file: string): string {
  const parts = file.split(sep);
  return parts.length > 1 ? parts[0] : '.';
}

/** The subfolder of its room a file is in, its path relative to src/; `.` for the room's root. */
function subfolderOf(file: string): string {
  const parts = file.split(sep);
  return parts.length > 2 ? parts[1] : '.';
}

/**
 * File → files of src/ it imports, as paths relative to src/ (type-only imports count: they are
 * dependencies a reader follows too).
 */
function fileImports(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets: string[] = [];
    for (const { fileName } of importedFiles) {
      let target: string;
      if (fileName.startsWith('@/')) target = join(SRC, fileName.slice(2));
      else if (fileName.startsWith('.')) target = resolve(dirname(file), fileName);
      else continue;
      targets.push(relative(SRC, `${target}.ts`));
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/** Room → rooms it imports, each arrow with the files that draw it. */
function arrows(files: Map<string, string[]>): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const [file, targets] of files) {
    for (const target of targets) {
      const from = roomOf(file);
      const to = roomOf(target);
      if (from === to) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      edges.set(to, [...(edges.get(to) ?? []), file]);
    }
  }
  return graph;
}

/**
 * File → the files of its own room (subfolders included) it imports: the arrows inside a room, where a
 * cycle would not show between rooms.
 */
function arrowsInside(files: Map<string, string[]>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, targets] of files) {
    graph.set(
      file,
      targets.filter((target) => target !== file && roomOf(target) === roomOf(file)),
    );
  }
  return graph;
}

function floorOf(room: string): number {
  const index = FLOORS.findIndex((rooms) => rooms.includes(room));
  if (index < 0) throw new Error(`src/${room} sits on no floor: add it to FLOORS`);
  return index;
}

function subfloorOf(room: string, subfolder: string): number {
  const index = (SUBFLOORS[room] ?? [['.']]).findIndex((floor) => floor.includes(subfolder));
  if (index < 0) throw new Error(`src/${room}/${subfolder} sits on no floor: add it to SUBFLOORS`);
  return index;
}

/** `file -> target` for each import from a subfolder to a higher one of the same room. */
function upwardInside(files: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of arrowsInside(files)) {
    const room = roomOf(file);
    for (const target of targets) {
      if (subfloorOf(room, subfolderOf(target)) > subfloorOf(room, subfolderOf(file))) {
        found.push(`${file} -> ${target}`);
      }
    }
  }
  return found;
}

/** Strongly connected groups of more than one node: rooms, or files (Tarjan). */
function cycles(graph: Map<string, Iterable<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('the folders of src/', () => {
  const files = fileImports();
  const graph = arrows(files);

  it('each sit on a floor', () => {
    const rooms = new Set([...graph.keys(), ...[...graph.values()].flatMap((e) => [...e.keys()])]);
    for (const room of rooms) expect(() => floorOf(room)).not.toThrow();
  });

  it('import each other in no cycle', () => {
    expect(cycles(new Map([...graph].map(([room, edges]) => [room, edges.keys()])))).toEqual([]);
  });

  it('hold no files that import each other in a cycle, subfolders included', () => {
    // Every import resolved to a file the graph holds, so that a cycle cannot hide behind a path misread.
    const unresolved = [...files.values()].flat().filter((target) => !files.has(target));
    expect(unresolved).toEqual([]);
    expect(cycles(arrowsInside(files))).toEqual([]);
  });

  it('point up a floor only where UPWARD says why, twice at most', () => {
    const upward: Record<string, string[]> = {};
    for (const [from, edges] of graph) {
      for (const [to, files] of edges) {
        if (floorOf(to) > floorOf(from)) upward[`${from} -> ${to}`] = files;
      }
    }
    expect(Object.keys(upward).sort()).toEqual(Object.keys(UPWARD).sort());
    expect(Object.keys(UPWARD).length).toBeLessThanOrEqual(2);
  });

  it('below the HTTP edge import nothing of it: infrastructure, the runtime and the core are free of HTTP', () => {
    const below = FLOORS.slice(0, Math.min(...EDGE.map(floorOf))).flat();
    const found: string[] = [];
    for (const [from, edges] of graph) {
      for (const [to, importers] of edges) {
        if (below.includes(from) && EDGE.includes(to))
          found.push(`${from} -> ${to}: ${importers.join(', ')}`);
      }
    }
    expect(below).toEqual(
      expect.arrayContaining(['core', 'runtime', 'config', 'engine', 'metrics']),
    );
    expect(found).toEqual([]);
  });

  it('each have their subfolders on floors, every subfolder on one', () => {
    for (const file of files.keys()) {
      expect(() => subfloorOf(roomOf(file), subfolderOf(file))).not.toThrow();
    }
  });

  it('import from their subfolders down or sideways only, never up', () => {
    expect(upwardInside(files)).toEqual([]);
  });
});

/** Classes validated by class-validator: those declared in a file that imports it. */
function validatedClasses(): Set<string> {
  const names = new Set<string>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes("from 'class-validator'")) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
    source.forEachChild((node) => {
      if (ts.isClassDeclaration(node) && node.name) names.add(node.name.text);
    });
  }
  return names;
}

function decoratorNames(node: ts.HasDecorators): string[] {
  return (ts.getDecorators(node) ?? []).flatMap((decorator) => {
    const call = decorator.expression;
    return ts.isCallExpression(call) && ts.isIdentifier(call.expression)
      ? [call.expression.text]
      : [];
  });
}

/** `Controller.method` of handlers taking a validated class from the body or query without ValidateDtos. */
function unvalidatedDtos(): string[] {
  const validated = validatedClasses();
  const found: string[] = [];
  for (const file of sources(SRC).filter((path) => path.endsWith('.controller.ts'))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    source.forEachChild((node) => {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      const onClass = decoratorNames(node).includes('ValidateDtos');
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || onClass) continue;
        if (decoratorNames(member).includes('ValidateDtos')) continue;
        const takesDto = member.parameters.some(
          (parameter) =>
            decoratorNames(parameter).some((name) => name === 'Body' || name === 'Query') &&
            parameter.type !== undefined &&
            ts.isTypeReferenceNode(parameter.type) &&
            validated.has(parameter.type.typeName.getText(source)),
        );
        if (takesDto) found.push(`${node.name.text}.${member.name.getText(source)}`);
      }
    });
  }
  return found;
}

/**
 * `Controller.method` of handlers where the administrator policy is not the guard's: a parameter typed
 * `AdminCaller` not taken with `@CurrentAdmin()`, or `@CurrentAdmin()` on a route without `@AdminOnly()`
 * (on the method or its class), which would fail on every request.
 */
function adminPolicyOutsideTheGuard(): { admins: number; found: string[] } {
  let admins = 0;
  const found: string[] = [];
  for (const file of sources(SRC).filter((path) => path.endsWith('.controller.ts'))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    source.forEachChild((node) => {
      if (!ts.isClassDeclaration(node) || !node.name) return;
      const classAdmin = decoratorNames(node).includes('AdminOnly');
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member)) continue;
        const adminOnly = classAdmin || decoratorNames(member).includes('AdminOnly');
        for (const parameter of member.parameters) {
          const takesAdmin = decoratorNames(parameter).includes('CurrentAdmin');
          const typedAdmin = parameter.type?.getText(source) === 'AdminCaller';
          if (takesAdmin) admins++;
          if (takesAdmin !== typedAdmin || (takesAdmin && !adminOnly)) {
            found.push(`${node.name.text}.${member.name.getText(source)}`);
          }
        }
      }
    });
  }
  return { admins, found };
}

describe('controllers', () => {
  it('that take a class-validator DTO carry @ValidateDtos() (there is no global validation pipe)', () => {
    expect(validatedClasses().size).toBeGreaterThan(0);
    expect(unvalidatedDtos()).toEqual([]);
  });

  it('take an AdminCaller only with @CurrentAdmin(), and only on @AdminOnly() routes', () => {
    const { admins, found } = adminPolicyOutsideTheGuard();
    expect(admins).toBeGreaterThan(0);
    expect(found).toEqual([]);
  });
});
