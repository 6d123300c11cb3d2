import { ANONYMOUS, Caller, asAdministrator } from '@/core/caller';

describe('asAdministrator', () => {
  const user: Caller = { ...ANONYMOUS, username: 'erin', userId: 'u1', tokenId: 't1' };

  it('admits a caller flagged as an administrator, as it is', () => {
    const admin = { ...user, isAdmin: true };
    expect(asAdministrator(admin)).toBe(admin);
  });

  it('admits nobody else: a signed-in user without the flag, or an anonymous caller', () => {
    expect(asAdministrator(user)).toBeNull();
    expect(asAdministrator(ANONYMOUS)).toBeNull();
  });
});
