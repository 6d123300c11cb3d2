import { UserField } from '@/core/user-fields';
import { parseNewUser, parseUserUpdate, withFieldDefaults } from '@/users/user-fields.rules';

const FIELDS: UserField[] = [
  {
    name: 'role',
    type: 'string',
    required: false,
    enum: ['manager', 'employee'],
    default: 'employee',
    description: '',
  },
  { name: 'level', type: 'integer', required: true, description: '' },
  { name: 'score', type: 'number', required: false, description: '' },
];

describe('parseNewUser', () => {
  it('applies defaults and keeps given fields', () => {
    expect(parseNewUser({ username: 'ann', password: 'pw', level: 3 }, FIELDS)).toEqual({
      username: 'ann',
      password: 'pw',
      isAdmin: false,
      fields: { role: 'employee', level: 3, score: null },
    });
  });

  it('ignores keys that are not user fields (form state that clients send along)', () => {
    const body = { username: 'ann', password: 'pw', level: 1, __prev__password: '', colour: 'red' };
    expect(parseNewUser(body, FIELDS)).toEqual({
      username: 'ann',
      password: 'pw',
      isAdmin: false,
      fields: { role: 'employee', level: 1, score: null },
    });
  });

  it.each([
    [{ password: 'pw', level: 1 }, 'Field "username" is required'],
    [{ username: 'a b', password: 'pw', level: 1 }, 'Field "username" must be'],
    [{ username: 'ann', level: 1 }, 'Field "password" is required'],
    [{ username: 'ann', password: 'pw' }, 'Field "level" is required'],
    [{ username: 'ann', password: 'pw', level: 1.5 }, 'Field "level" must be of type integer'],
    [
      { username: 'ann', password: 'pw', level: 1, role: 'boss' },
      'Field "role" must be one of manager, employee',
    ],
    [
      { username: 'ann', password: 'pw', level: 1, is_admin: 'yes' },
      'Field "is_admin" must be a boolean',
    ],
    [
      { username: 'ann', password: 'pw', level: null },
      'Field "level" is required and cannot be null',
    ],
    [[1, 2], 'The body must be a JSON object'],
  ])('refuses %j', (body, message) => {
    expect(() => parseNewUser(body, FIELDS)).toThrow(message);
  });
});

describe('parseUserUpdate', () => {
  it('returns only what is sent', () => {
    expect(parseUserUpdate({ role: 'manager' }, FIELDS, 'ann')).toEqual({
      isAdmin: undefined,
      fields: { role: 'manager' },
    });
    expect(parseUserUpdate({ is_admin: true }, FIELDS, 'ann')).toEqual({
      isAdmin: true,
      fields: {},
    });
  });

  it('accepts the username of the path and ignores keys that are not user fields', () => {
    expect(parseUserUpdate({ username: 'ann', nope: 1, level: 2 }, FIELDS, 'ann')).toEqual({
      isAdmin: undefined,
      fields: { level: 2 },
    });
  });

  it('refuses another username and any password', () => {
    expect(() => parseUserUpdate({ username: 'x' }, FIELDS, 'ann')).toThrow(
      'A username cannot be changed',
    );
    expect(() => parseUserUpdate({ password: 'x' }, FIELDS, 'ann')).toThrow('change-password');
  });
});

describe('withFieldDefaults', () => {
  it('fills fields added to the project after the user was stored', () => {
    expect(withFieldDefaults({ level: 2 }, FIELDS)).toEqual({
      role: 'employee',
      level: 2,
      score: null,
    });
  });
});
