import { ConfigError } from '@/config/config-error';
import { loadSsoConfig } from '@/config/sso-config';

describe('loadSsoConfig', () => {
  it('is off by default', () => {
    expect(loadSsoConfig({})).toEqual({
      header: undefined,
      oidc: undefined,
      adminGroups: [],
      fieldMap: {},
    });
  });

  it('reads header mode with its defaults and matches IPv4 and IPv6 peers', () => {
    const sso = loadSsoConfig({ SSO_HEADER_PROXIES: '10.0.0.0/8, 192.168.1.5, fd00::/8' });
    expect(sso.header).toMatchObject({
      proxyCidrs: ['10.0.0.0/8', '192.168.1.5', 'fd00::/8'],
      userHeader: 'x-forwarded-user',
      emailHeader: 'x-forwarded-email',
      groupsHeader: 'x-forwarded-groups',
    });
    expect(sso.header?.proxies.check('10.1.2.3', 'ipv4')).toBe(true);
    expect(sso.header?.proxies.check('192.168.1.6', 'ipv4')).toBe(false);
    expect(sso.header?.proxies.check('fd00::1', 'ipv6')).toBe(true);
  });

  it('reads OIDC mode with its defaults', () => {
    expect(
      loadSsoConfig({ OIDC_ISSUER: 'https://idp.example/realms/x/', OIDC_AUDIENCE: 'drey' }).oidc,
    ).toEqual({
      issuer: 'https://idp.example/realms/x/',
      jwksUrl: undefined,
      audience: 'drey',
      usernameClaim: 'preferred_username',
      groupsClaim: 'groups',
      clockSkewSeconds: 60,
      jwksCooldownSeconds: 30,
    });
  });

  it.each([
    [{ SSO_HEADER_PROXIES: '10.0.0.0/33' }, 'SSO_HEADER_PROXIES has an invalid CIDR "10.0.0.0/33"'],
    [{ SSO_HEADER_PROXIES: 'proxy.local' }, 'SSO_HEADER_PROXIES has an invalid CIDR'],
    [{ SSO_HEADER_PROXIES: '10.0.0.1', SSO_HEADER_SECRET: 'x' }, 'must be set together'],
    [
      { SSO_HEADER_PROXIES: '10.0.0.1', SSO_HEADER_USER: 'X User' },
      'SSO_HEADER_USER is not a valid header name',
    ],
    [{ OIDC_ISSUER: 'https://idp' }, 'OIDC_AUDIENCE is required when OIDC_ISSUER is set'],
    [{ OIDC_AUDIENCE: 'drey' }, 'OIDC_ISSUER is required'],
    [{ OIDC_ISSUER: 'ftp://idp', OIDC_AUDIENCE: 'a' }, 'OIDC_ISSUER must be an http(s) URL'],
    [
      { OIDC_ISSUER: 'https://idp', OIDC_AUDIENCE: 'a', OIDC_CLOCK_SKEW_S: '-1' },
      'OIDC_CLOCK_SKEW_S',
    ],
    [{ SSO_FIELD_MAP: '{bad' }, 'SSO_FIELD_MAP is not valid JSON'],
    [{ SSO_FIELD_MAP: '{"role": "manager"}' }, 'entry "role" must map groups to values'],
    [{ SSO_FIELD_MAP: '{"role": {"g": [1]}}' }, 'value of "role.g" must be'],
  ])('refuses %j', (env, message) => {
    expect(() => loadSsoConfig(env)).toThrow(ConfigError);
    expect(() => loadSsoConfig(env)).toThrow(message);
  });
});
