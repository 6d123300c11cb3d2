import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isDiskFull, isUnavailable } from '@/runtime/outages';

describe('isUnavailable', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }],
    [
      {
        driverError: {
          code: '57P01',
          message: 'terminating connection due to administrator command',
        },
      },
    ],
    [{ driverError: { code: '08006' } }],
    [new Error('Connection terminated unexpectedly')],
    [{ message: 'x', cause: { code: 'ECONNRESET' } }],
    [{ driverError: { code: '57P02' } }],
    [{ driverError: { code: '57P03', message: 'the database system is starting up' } }],
    [{ code: '08P01' }],
    [new Error('Client was closed and is not queryable')],
  ])('recognises %j', (error) => {
    expect(isUnavailable(error)).toBe(true);
  });

  it("recognises TypeORM's query runner released under a transaction by a dropped connection", () => {
    expect(isUnavailable(new QueryRunnerAlreadyReleasedError())).toBe(true);
    expect(isUnavailable(new QueryRunnerProviderAlreadyReleasedError())).toBe(true);
  });

  it.each([
    [{ code: '23505' }],
    [{ code: '57014' }],
    [new Error('Query failed')],
    [new Error('syntax error')],
    [null],
    ['text'],
  ])('does not take %j for an outage', (error) => {
    expect(isUnavailable(error)).toBe(false);
  });
});

describe('isDiskFull', () => {
  it.each([
    [{ code: 'ENOSPC' }],
    [
      {
        code: 'model_failed',
        engineMessage:
          'IO Error: Could not write file "<DATA_DIR>/exports/1/x.csv": No space left on device',
      },
    ],
    [new Error('ENOSPC: no space left on device, write')],
  ])('recognises %j', (error) => {
    expect(isDiskFull(error)).toBe(true);
  });

  it.each([
    [{ code: 'model_failed', engineMessage: 'Binder Error: column "x" not found' }],
    [new Error('IO Error: Could not read file')],
    [null],
  ])('does not take %j for a full disk', (error) => {
    expect(isDiskFull(error)).toBe(false);
  });
});
