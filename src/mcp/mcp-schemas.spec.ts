import { ANONYMOUS, Caller } from '@/core/caller';
import { offeredTools } from '@/mcp/mcp-schemas';

describe('offeredTools', () => {
  const user: Caller = { ...ANONYMOUS, username: 'u', userId: '1' };
  const grant = (kind: 'dataset' | 'dashboard'): Caller => ({
    ...user,
    username: 'embed:viewer',
    embed: { tokenId: null, kind, name: 'x', locked: {}, defaults: {} },
  });

  it('offers query_models to administrators only', () => {
    expect(offeredTools(ANONYMOUS)).toEqual([
      'catalog',
      'dataset_parameters',
      'dataset_rows',
      'dataset_export',
      'dashboard',
    ]);
    expect(offeredTools({ ...user, isAdmin: true })).toContain('query_models');
  });

  it("offers an embedding token's holder the tools of its item's kind, never query_models", () => {
    expect(offeredTools(grant('dashboard'))).toEqual(['catalog', 'dashboard']);
    expect(offeredTools(grant('dataset'))).toEqual([
      'catalog',
      'dataset_parameters',
      'dataset_rows',
    ]);
    expect(offeredTools({ ...grant('dataset'), isAdmin: true })).not.toContain('query_models');
    // A link would carry the token's grant past the token's own life.
    expect(offeredTools(grant('dataset'))).not.toContain('dataset_export');
  });
});
