import { callerReadsOf } from '@/engine/query/model-reads';

describe('callerReadsOf', () => {
  it('finds nothing in a model that never names the user', () => {
    expect(
      callerReadsOf(
        "SELECT user_id, users.name, 'user' AS t FROM {{ ref('users') }} WHERE x = {{ params.user }}",
      ),
    ).toEqual([]);
  });

  it('names each user.<name> read inside tags, in any branch, and ignores comments', () => {
    expect(
      callerReadsOf(
        '{# user.secret #}SELECT 1 {% if user.is_admin %}, {{ user.role }}{% else %}, {{ user . username }}{% endif %}',
      ),
    ).toEqual(['is_admin', 'role', 'username']);
  });

  it('reads the whole caller when the user is used other than through a member', () => {
    expect(callerReadsOf('{% set u = user %}SELECT {{ u.role }}')).toBe('all');
    expect(callerReadsOf("SELECT {{ user['role'] }}")).toBe('all');
    expect(callerReadsOf('SELECT {{ user | dump }}')).toBe('all');
  });
});
