import { ResultTooLargeError } from '@/core/errors';
import { renderLegacy } from '@/legacy/errors';

describe('renderLegacy', () => {
  it('answers {detail}, with message too on a 400, and retry_after when there is one', () => {
    expect(renderLegacy({ status: 404, message: 'No such dataset' }, null)).toEqual({
      detail: 'No such dataset',
    });
    expect(renderLegacy({ status: 400, message: 'Bad' }, null)).toEqual({
      detail: 'Bad',
      message: 'Bad',
    });
    expect(renderLegacy({ status: 503, message: 'Wait', retryAfterSeconds: 5 }, null)).toEqual({
      detail: 'Wait',
      retry_after: 5,
    });
  });

  it('words a whole result past the cap with the ways its clients can read every row', () => {
    const error = new ResultTooLargeError(120000, 100000);
    const body = renderLegacy({ status: 400, message: error.message }, error) as {
      detail: string;
      message: string;
    };
    expect(error.message).not.toContain('x_offset');
    expect(body.detail).toContain('The result has 120000 rows');
    expect(body.detail).toContain('page it in the current layout (x_offset, x_limit)');
    expect(body.message).toBe(body.detail);
  });
});
