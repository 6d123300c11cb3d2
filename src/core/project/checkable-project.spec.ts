import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkableProject } from '@/core/project/checkable-project';
import { readProject } from '@/core/project/project-loader';

const EXAMPLE = join(__dirname, '..', '..', '..', 'examples', 'expenses');

/** The example project with `edits` applied, read without throwing. */
function readEdited(edits: [file: string, from: string, to: string][]) {
  const dir = mkdtempSync(join(tmpdir(), 'drey-checkable-'));
  try {
    cpSync(EXAMPLE, dir, { recursive: true });
    for (const [file, from, to] of edits) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(text).toContain(from);
      writeFileSync(join(dir, file), text.replace(from, to));
    }
    return readProject(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function checkable(edits: [file: string, from: string, to: string][]) {
  const reading = readEdited(edits);
  if (!reading.project) throw new Error('project.yml did not read');
  const { project, leftOut } = checkableProject(
    reading.project,
    reading.problems,
    reading.declaredParameters,
  );
  return {
    problems: reading.problems,
    models: project.models.map((model) => model.name),
    parameters: project.parameters.map((parameter) => parameter.name),
    leftOut,
  };
}

describe('the part of a project whose SQL can be checked despite its problems', () => {
  it('is the whole project when there is no problem', () => {
    const whole = checkable([]);
    expect(whole.problems).toEqual([]);
    expect(whole.leftOut).toEqual([]);
    expect(whole.models).toHaveLength(7);
    expect(whole.parameters).toHaveLength(11);
  });

  it('keeps what a manifest-only problem does not touch', () => {
    const result = checkable([['project.yml', 'major_version: 1', 'major_version: -1']]);
    expect(result.problems.map((problem) => problem.path)).toEqual(['major_version']);
    expect(result.leftOut).toEqual([]);
    expect(result.models).toHaveLength(7);
  });

  it('leaves out, until nothing changes, what reads a model left out: parameters, their children, models', () => {
    // The categories seed's file has a problem: the build model that joins it goes, and the models over that;
    // category's options query refs the seed, and subcategory is category's child.
    const result = checkable([['seeds/categories.yml', 'columns:', 'colums:']]);
    expect(result.problems.map((problem) => problem.file)).toEqual(['seeds/categories.yml']);
    expect(result.models).toEqual(['expenses', 'subcategories']);
    expect(result.parameters).not.toContain('category');
    expect(result.parameters).not.toContain('subcategory');
    expect(result.parameters).toEqual(expect.arrayContaining(['group_by', 'start_date']));
    expect(result.parameters).toHaveLength(9);
    expect(result.leftOut).toEqual([
      'models/expense_details.sql',
      'models/expense_transactions.sql',
      'models/expenses_by_month.sql',
      'models/expenses_grouped.sql',
    ]);
  });

  it('leaves out a model that reads a parameter that did not parse, not one that reads no such parameter', () => {
    const result = checkable([
      [
        'project.yml',
        'widget: number\n    label: Amounts Less Than',
        'widget: x\n    label: Amounts Less Than',
      ],
    ]);
    expect(result.parameters).not.toContain('max_filter');
    expect(result.leftOut).toEqual(['models/expenses_by_month.sql']);
  });
});
