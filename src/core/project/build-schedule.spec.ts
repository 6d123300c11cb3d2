import { nextRun, patternProblem, zoneProblem } from '@/core/project/build-schedule';

describe('build schedules', () => {
  it('names the next time in the schedule’s zone, seconds included', () => {
    const from = new Date('2026-03-28T23:30:00Z');
    // Six in the morning in Paris, the day summer time starts there (UTC+2 from 01:00 UTC).
    expect(nextRun({ pattern: '0 6 * * *', timezone: 'Europe/Paris' }, from).toISOString()).toBe(
      '2026-03-29T04:00:00.000Z',
    );
    expect(nextRun({ pattern: '*/10 * * * * *', timezone: 'UTC' }, from).toISOString()).toBe(
      '2026-03-28T23:30:10.000Z',
    );
  });

  it('refuses what is not a pattern or a zone, and a pattern too long to be one', () => {
    expect(patternProblem('0 6 * * *')).toBeUndefined();
    expect(patternProblem('0 6 * * * * *')).toMatch(/five fields .* got 7/);
    expect(patternProblem('0 6 31 2 x')).toMatch(/^is not a cron pattern/);
    expect(patternProblem(`0 ${'1,'.repeat(150)}1 * * *`)).toBe('must be at most 200 characters');
    expect(zoneProblem('UTC')).toBeUndefined();
    expect(zoneProblem('Europe/Nowhere')).toMatch(/must be a time zone/);
  });
});
