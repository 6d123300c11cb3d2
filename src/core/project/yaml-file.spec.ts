import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Problems } from '@/core/project-errors';
import { readYaml } from '@/core/project/yaml-file';

const MANIFEST = readFileSync(join(__dirname, '../../../examples/expenses/project.yml'), 'utf8');

describe('readYaml', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'drey-yaml-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function problemsWithLine83(line: string): string[] {
    const lines = MANIFEST.split('\n');
    expect(lines[82]).toBe('    default: [2024-01-01, 2024-12-31]');
    lines[82] = line;
    writeFileSync(join(dir, 'project.yml'), lines.join('\n'));
    const problems = new Problems();
    expect(readYaml(dir, 'project.yml', problems)).toBeUndefined();
    return problems.list.map((p) => `${p.file}|${p.path}|${p.message}`);
  }

  it.each([
    [
      'an unclosed flow sequence',
      '    default: [2024-01-01, 2024-12-31',
      /^project\.yml\|line 83, column 14\|Flow sequence/,
    ],
    ['a tab as indentation', '\tdefault: 1', /^project\.yml\|line 83, column 1\|Tabs/],
    [
      'a key without its colon',
      '    default [2024-01-01, 2024-12-31]',
      /^project\.yml\|line 83, column 5\|/,
    ],
    [
      'an unclosed quote',
      '    default: "2024-01-01',
      /^project\.yml\|line 83, column 14\|Missing closing/,
    ],
  ])('reports %s once, at its own line', (_what, line, expected) => {
    expect(problemsWithLine83(line)).toEqual([expect.stringMatching(expected)]);
  });
});
