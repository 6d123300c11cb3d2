import { Command, helpText, isUsersCommand, parseArgs, USAGE } from '@/cli/cli-args';

describe('the users commands on the command line', () => {
  it('reads users add with its name, --admin, user fields and --password-stdin', () => {
    expect(
      parseArgs([
        'users',
        'add',
        'mia',
        '--admin',
        '--user-field',
        'role=manager',
        '--password-stdin',
      ]),
    ).toMatchObject({
      command: 'users add',
      username: 'mia',
      admin: true,
      userFields: { role: 'manager' },
      passwordStdin: true,
    });
    expect(parseArgs(['users', 'add', 'leo'])).toMatchObject({
      command: 'users add',
      username: 'leo',
      admin: false,
      passwordStdin: false,
    });
  });

  it('reads users list with a format, and users unlock with its name', () => {
    expect(parseArgs(['users', 'list'])).toMatchObject({ command: 'users list', format: 'table' });
    expect(parseArgs(['users', 'list', '--format', 'json'])).toMatchObject({ format: 'json' });
    expect(parseArgs(['users', 'unlock', 'mia'])).toMatchObject({
      command: 'users unlock',
      username: 'mia',
    });
  });

  it.each([
    [['users', 'add'], 'users add needs a user name'],
    [['users', 'unlock'], 'users unlock needs a user name'],
    [['users', 'unlock', 'a', 'b'], 'unexpected "b"'],
    [['users', 'list', 'x'], 'unexpected "x"'],
    [['users', 'list', '--admin'], 'users list takes no --admin'],
    [['users', 'unlock', 'mia', '--password-stdin'], 'users unlock takes no --password-stdin'],
    [['users', 'add', 'mia', '--format', 'csv'], 'users add takes no --format'],
    [['users', 'remove', 'mia'], 'unknown users command "remove"'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(message);
  });

  it('has a help text for each, and lists them in the usage', () => {
    for (const [argv, usage] of [
      [['users', 'add', '--help'], 'users add <name>'],
      [['help', 'users', 'list'], 'users list'],
      [['users', 'unlock', '-h'], 'users unlock <name>'],
    ] as const) {
      const args = parseArgs(argv);
      expect(args.command).toBe('help');
      expect(helpText(args.helpFor)).toMatch(new RegExp(`^Usage: npm run drey -- ${usage}`));
    }
    for (const words of ['users add <name>', 'users list', 'users unlock <name>']) {
      expect(USAGE).toContain(words);
    }
  });

  it('tells the users commands apart from the project commands', () => {
    const users: Command[] = ['reset-password', 'users add', 'users list', 'users unlock'];
    expect(users.every((command) => isUsersCommand(command))).toBe(true);
    expect(isUsersCommand('run')).toBe(false);
  });
});
