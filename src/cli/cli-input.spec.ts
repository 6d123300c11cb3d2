import { parseArgs, UsageError } from '@/cli/cli-args';

/** The input rules every door applies (core/input-rules.ts), as the command line applies them. */
describe('the command line keeps the input rules', () => {
  const refusal = (argv: string[]): string => {
    try {
      parseArgs(argv);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error(`parseArgs accepted ${argv.slice(0, 3).join(' ')}`);
  };

  it('takes selections within the bounds', () => {
    expect(
      parseArgs(['run', 'expenses_by_month', '--param', `start_date=${'2'.repeat(100_000)}`]),
    ).toMatchObject({ command: 'run', params: { start_date: '2'.repeat(100_000) } });
  });

  it('refuses a selection longer than any input may be, naming it', () => {
    expect(
      refusal(['run', 'expenses_by_month', '--param', `start_date=${'2'.repeat(100_001)}`]),
    ).toBe('--param.start_date is longer than 100000 characters');
  });

  it('refuses more selections than an input may have', () => {
    const many = Array.from({ length: 1001 }, (_, i) => ['--param', `p${i}=1`]).flat();
    expect(refusal(['run', 'expenses_by_month', ...many])).toMatch(
      /^--param takes the input past 1000 members/,
    );
  });

  it('refuses what storage cannot hold, in a value, a name or an argument', () => {
    // A shell passes no NUL, but a program that spawns the CLI may build any string.
    expect(refusal(['run', 'expenses_by_month', '--param', 'start_date=\ud800'])).toMatch(
      /^--param\.start_date holds a NUL character or an unpaired UTF-16 surrogate/,
    );
    expect(refusal(['embed-token', 'dataset', 'x\0y'])).toMatch(/^"x\uFFFDy" holds a NUL/);
    expect(refusal(['run', 'expenses_by_month', '--as', 'a\udc00'])).toMatch(/^--as holds/);
  });
});
