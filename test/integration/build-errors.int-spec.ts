import { fromDist } from './bootstrap';

const { DomainError } = fromDist<typeof import('@/core/errors')>('core/errors');
const { describeError, renderCurrent } = fromDist<typeof import('@/http/errors/error-mapping')>(
  'http/errors/error-mapping',
);
const { renderLegacy } = fromDist<typeof import('@/legacy/errors')>('legacy/errors');

/**
 * What a failed build answers in each layout's documented shape: the project's fault a 4xx (a client error
 * of the interface's kind: fix the project, build again), the infrastructure's a 5xx, an interrupted
 * build a 503. The build routes are the current layout's; a legacy path renders the same description.
 */
describe('a failed build, in both layouts', () => {
  const message =
    'build model "expense_details" (models/expense_details.sql, line 1, column 15) failed';

  it('is 400 invalid_project when the project made it fail', () => {
    const reply = describeError(new DomainError('invalid_project', message));
    expect(reply).toMatchObject({ status: 400, code: 'invalid_project', unexpected: false });
    expect(renderCurrent(reply)).toEqual({ statusCode: 400, error: 'invalid_project', message });
    expect(renderLegacy(reply, null)).toEqual({ detail: message, message });
  });

  it('stays 500 build_failed when something it needed failed, and 503 when it was interrupted', () => {
    const failed = describeError(new DomainError('build_failed', 'source unreachable'));
    expect(failed).toMatchObject({ status: 500, code: 'build_failed' });
    expect(renderLegacy(failed, null)).toEqual({ detail: 'source unreachable' });
    const interrupted = describeError(new DomainError('build_interrupted', 'stopped', 5));
    expect(renderCurrent(interrupted)).toEqual({
      statusCode: 503,
      error: 'build_interrupted',
      message: 'stopped',
      retry_after: 5,
    });
  });
});
