import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProjectError } from '@/project/project-errors';
import { loadProject } from '@/project/project-loader';

const EXAMPLE = join(__dirname, '..', '..', 'examples', 'expenses');

function projectWith(manifest: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'drey-project-'));
  writeFileSync(join(dir, 'project.yml'), manifest);
  return dir;
}

function problemsOf(dir: string): string[] {
  try {
    loadProject(dir);
  } catch (error) {
    if (error instanceof ProjectError)
      return error.problems.map((p) => `${p.file}|${p.path}|${p.message}`);
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [];
}

describe('loadProject', () => {
  it('loads the example project', () => {
    expect(loadProject(EXAMPLE)).toMatchObject({
      name: 'expenses',
      label: 'Expenses',
      majorVersion: 1,
    });
  });

  it('reports every problem of the manifest at once, with the path inside the file', () => {
    expect(problemsOf(projectWith('name: Bad Name\nlabel: 3\nmajor_version: -1\n'))).toEqual([
      'project.yml|name|must be a lowercase name (letters, digits, _ or -)',
      'project.yml|label|must be a string',
      'project.yml|major_version|must be a whole number from 0 up',
    ]);
  });

  it('reports a YAML syntax error with its line', () => {
    const [problem] = problemsOf(projectWith('name: x\n  bad: [\n'));
    expect(problem).toMatch(/^project\.yml\|line \d+\|/);
  });

  it('reports a missing manifest', () => {
    expect(problemsOf(mkdtempSync(join(tmpdir(), 'drey-empty-')))).toEqual([
      'project.yml||file not found',
    ]);
  });

  it('formats problems one per line, without a stack', () => {
    const error = new ProjectError([{ file: 'project.yml', path: 'name', message: 'is wrong' }]);
    expect(error.message).toBe(
      'The project is invalid (1 problem):\n  project.yml at name: is wrong',
    );
  });
});
