import { InvalidRequestError } from '@/core/errors';
import { checkArguments } from '@/mcp/mcp-arguments';
import type { ToolName } from '@/mcp/mcp-schemas';

function refusal(tool: ToolName, args: unknown): string {
  try {
    checkArguments(tool, args);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return (error as Error).message;
  }
  throw new Error('checkArguments accepted the arguments');
}

describe('checkArguments', () => {
  it('passes arguments of the right JSON types, whatever their values', () => {
    const args = { dataset: 'nope', selections: { any: [1, 'x'] }, limit: 1_000_000 };
    expect(checkArguments('dataset_rows', args)).toBe(args);
    expect(checkArguments('catalog', {})).toEqual({});
  });

  it('names the argument whose type is wrong, or that the tool does not take', () => {
    expect(refusal('query_models', { sql: 1 })).toBe('arguments.sql must be a string');
    expect(refusal('query_models', { sql: 'x', limit: 1.5 })).toBe(
      'arguments.limit must be a whole number',
    );
    expect(refusal('dataset_rows', { dataset: 'd', columns: ['a', {}] })).toBe(
      'arguments.columns[1] must be a string',
    );
    expect(refusal('dataset_rows', { dataset: 'd', selections: [] })).toBe(
      'arguments.selections must be an object',
    );
    expect(refusal('catalog', { foo: 1 })).toBe('arguments: unknown property "foo"');
    expect(refusal('dashboard', {})).toBe('arguments.dashboard is required');
    expect(refusal('catalog', 'x')).toBe('arguments must be an object');
  });

  it('applies the input rules first: a NUL, a size, a count, a depth', () => {
    expect(refusal('query_models', { sql: 'select 1\0' })).toMatch(
      /^arguments\.sql holds a NUL character/,
    );
    // Not quoted back as an unknown property: the key is refused for its length.
    expect(refusal('catalog', { ['k'.repeat(100_001)]: 1 })).toBe(
      'arguments has a key longer than 100000 characters',
    );
    const wide = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`p${i}`, i]));
    expect(refusal('dataset_rows', { dataset: 'd', selections: wide })).toMatch(
      /^arguments\.selections takes the input past 1000 members/,
    );
    let deep: unknown = 1;
    for (let level = 0; level < 40; level++) deep = { a: deep };
    expect(refusal('dataset_rows', { dataset: 'd', selections: deep })).toMatch(
      /nests deeper than 32 levels$/,
    );
  });
});
