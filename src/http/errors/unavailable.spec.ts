import { isUnavailable } from '@/http/errors/unavailable';

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
  ])('recognises %j', (error) => {
    expect(isUnavailable(error)).toBe(true);
  });

  it.each([[{ code: '23505' }], [new Error('syntax error')], [null], ['text']])(
    'does not take %j for an outage',
    (error) => {
      expect(isUnavailable(error)).toBe(false);
    },
  );
});
