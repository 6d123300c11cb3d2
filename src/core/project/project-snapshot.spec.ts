import { join } from 'node:path';
import { Decimal } from '@/core/parameters/decimal';
import { loadProject } from '@/core/project/project-loader';
import {
  projectSnapshot,
  readProjectSnapshot,
  readSnapshot,
} from '@/core/project/project-snapshot';

const EXAMPLE = join(__dirname, '..', '..', '..', 'examples', 'expenses');

describe('projectSnapshot', () => {
  it('reads back the project it was written from, exact decimals included, for the folder given', () => {
    const project = loadProject(EXAMPLE);
    const text = projectSnapshot(project);
    // The folder it was read from is kept beside it, not in it.
    expect(readSnapshot(text, '/p')?.from).toBe(project.dir);
    const read = readProjectSnapshot(text, '/elsewhere/expenses');
    expect(read).toEqual({ ...project, dir: '/elsewhere/expenses' });
    // The example's number parameters keep exact bounds: they come back as Decimals, not as strings.
    const minOf = (of: typeof project | undefined) =>
      (
        of?.parameters.find((parameter) => parameter.name === 'limit') as
          { variants: { spec: { min?: unknown } }[] } | undefined
      )?.variants[0]?.spec.min;
    expect(minOf(project)).toBeInstanceOf(Decimal);
    expect(minOf(read)).toBeInstanceOf(Decimal);
    expect(String(minOf(read))).toBe('0');
  });

  it('is undefined for text that is not a snapshot', () => {
    for (const text of ['', '{', '{"format":2,"project":{"name":"x"}}', '[]', 'null']) {
      expect(readProjectSnapshot(text, '/p')).toBeUndefined();
    }
  });
});
