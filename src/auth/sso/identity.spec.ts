import { checkFieldMap, mapIdentity, splitGroups } from '@/auth/sso/identity';
import type { SsoConfig } from '@/config/sso-config';
import type { UserField } from '@/core/user-fields';

const FIELDS: UserField[] = [
  {
    name: 'role',
    type: 'string',
    required: false,
    enum: ['manager', 'employee'],
    default: 'employee',
    description: '',
  },
  { name: 'email', type: 'string', required: false, description: '' },
];

const SSO: SsoConfig = {
  adminGroups: ['drey-admins'],
  fieldMap: { role: { 'finance-managers': 'manager', staff: 'employee' } },
};

describe('mapIdentity', () => {
  it('maps admin groups and the first matching group in map order', () => {
    const mapped = mapIdentity(
      {
        username: 'u',
        groups: ['staff', 'finance-managers', 'drey-admins'],
        source: 'header',
        email: 'u@x.org',
      },
      SSO,
      FIELDS,
    );
    expect(mapped).toEqual({ isAdmin: true, fields: { role: 'manager', email: 'u@x.org' } });
  });

  it('falls back to defaults without a matching group', () => {
    expect(mapIdentity({ username: 'u', groups: ['other'], source: 'oidc' }, SSO, FIELDS)).toEqual({
      isAdmin: false,
      fields: { role: 'employee', email: null },
    });
  });
});

describe('checkFieldMap', () => {
  it('refuses unknown fields and values outside the enum', () => {
    const bad: SsoConfig = {
      adminGroups: [],
      fieldMap: { colour: { a: 'red' }, role: { b: 'boss' } },
    };
    expect(checkFieldMap(bad, FIELDS)).toEqual([
      'SSO_FIELD_MAP names "colour", which is not a user field of the project',
      'SSO_FIELD_MAP value "boss" of group "b" does not fit user field "role"',
    ]);
    expect(checkFieldMap(SSO, FIELDS)).toEqual([]);
  });
});

describe('splitGroups', () => {
  it('splits on commas and trims', () => {
    expect(splitGroups(' a, b ,,c ')).toEqual(['a', 'b', 'c']);
    expect(splitGroups(undefined)).toEqual([]);
  });
});
