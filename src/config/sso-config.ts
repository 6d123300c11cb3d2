import { BlockList, isIP } from 'node:net';
import { ConfigError } from '@/config/config-error';
import { type Env, list, text } from '@/config/env-values';

/** Trusted identity headers from an authenticating proxy. */
export interface HeaderSsoConfig {
  /** Peers allowed to assert identity headers (TCP peer address, never X-Forwarded-For). */
  proxies: BlockList;
  proxyCidrs: string[];
  userHeader: string;
  emailHeader: string;
  groupsHeader: string;
  /** Both set: identity headers count only when this header carries this value. */
  secretHeader?: string;
  secret?: string;
}

/** Bearer tokens of an OpenID Connect identity provider. */
export interface OidcConfig {
  issuer: string;
  /** Undefined: taken from the issuer's discovery document. */
  jwksUrl?: string;
  audience: string;
  usernameClaim: string;
  groupsClaim: string;
  clockSkewSeconds: number;
  /** After a JWKS fetch, no other fetch for this long, even for an unknown key id. */
  jwksCooldownSeconds: number;
  /**
   * OIDC_CLIENT_ID (and OIDC_CLIENT_SECRET for a confidential client): Drey as the provider's client, so
   * that the sign-in page of its own authorization server sends people to the provider (docs/mcp.md).
   */
  clientId?: string;
  clientSecret?: string;
}

export interface SsoConfig {
  header?: HeaderSsoConfig;
  oidc?: OidcConfig;
  adminGroups: string[];
  /** user field -> group -> value; the first group in the map's own order that the user has wins. */
  fieldMap: Record<string, Record<string, string | number | boolean>>;
}

const HEADER_NAME = /^[A-Za-z0-9-]{1,100}$/;

function headerName(env: Env, name: string, fallback: string): string {
  const value = text(env, name) ?? fallback;
  if (!HEADER_NAME.test(value))
    throw new ConfigError(name, `is not a valid header name: "${value}"`);
  return value.toLowerCase();
}

function parseProxies(env: Env): { blockList: BlockList; cidrs: string[] } {
  const blockList = new BlockList();
  const cidrs = list(env, 'SSO_HEADER_PROXIES');
  for (const cidr of cidrs) {
    const [address, bits, extra] = cidr.split('/');
    const family = isIP(address ?? '');
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : Number(bits);
    if (!family || extra !== undefined || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
      throw new ConfigError('SSO_HEADER_PROXIES', `has an invalid CIDR "${cidr}"`);
    }
    blockList.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return { blockList, cidrs };
}

function parseFieldMap(env: Env): SsoConfig['fieldMap'] {
  const raw = text(env, 'SSO_FIELD_MAP');
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('SSO_FIELD_MAP', 'is not valid JSON');
  }
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(parsed)) throw new ConfigError('SSO_FIELD_MAP', 'must be a JSON object');
  for (const [field, groups] of Object.entries(parsed)) {
    if (!isObject(groups)) {
      throw new ConfigError('SSO_FIELD_MAP', `entry "${field}" must map groups to values`);
    }
    for (const [group, value] of Object.entries(groups)) {
      if (!['string', 'number', 'boolean'].includes(typeof value)) {
        throw new ConfigError(
          'SSO_FIELD_MAP',
          `value of "${field}.${group}" must be a string, number or boolean`,
        );
      }
    }
  }
  return parsed as SsoConfig['fieldMap'];
}

function httpUrl(env: Env, name: string): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error();
  } catch {
    throw new ConfigError(name, 'must be an http(s) URL');
  }
  return raw.replace(/\/+$/, '');
}

/** Both single sign-on modes, off unless configured (see the decisions page's SSO table). */
export function loadSsoConfig(env: Env): SsoConfig {
  const { blockList, cidrs } = parseProxies(env);
  const secretHeader = text(env, 'SSO_HEADER_SECRET_NAME');
  const secret = env.SSO_HEADER_SECRET ? env.SSO_HEADER_SECRET : undefined;
  if ((secretHeader === undefined) !== (secret === undefined)) {
    throw new ConfigError('SSO_HEADER_SECRET', 'and SSO_HEADER_SECRET_NAME must be set together');
  }
  const header: HeaderSsoConfig | undefined =
    cidrs.length === 0
      ? undefined
      : {
          proxies: blockList,
          proxyCidrs: cidrs,
          userHeader: headerName(env, 'SSO_HEADER_USER', 'X-Forwarded-User'),
          emailHeader: headerName(env, 'SSO_HEADER_EMAIL', 'X-Forwarded-Email'),
          groupsHeader: headerName(env, 'SSO_HEADER_GROUPS', 'X-Forwarded-Groups'),
          secretHeader: secretHeader
            ? headerName(env, 'SSO_HEADER_SECRET_NAME', secretHeader)
            : undefined,
          secret,
        };
  const issuer = httpUrl(env, 'OIDC_ISSUER');
  let oidc: OidcConfig | undefined;
  if (issuer) {
    const audience = text(env, 'OIDC_AUDIENCE');
    if (!audience) throw new ConfigError('OIDC_AUDIENCE', 'is required when OIDC_ISSUER is set');
    const skew = text(env, 'OIDC_CLOCK_SKEW_S') ?? '60';
    if (!/^\d+$/.test(skew) || Number(skew) > 3600) {
      throw new ConfigError(
        'OIDC_CLOCK_SKEW_S',
        'must be a whole number of seconds from 0 to 3600',
      );
    }
    const cooldown = text(env, 'OIDC_JWKS_COOLDOWN_S') ?? '30';
    if (!/^\d+$/.test(cooldown) || Number(cooldown) > 3600) {
      throw new ConfigError(
        'OIDC_JWKS_COOLDOWN_S',
        'must be a whole number of seconds from 0 to 3600',
      );
    }
    oidc = {
      issuer: text(env, 'OIDC_ISSUER') as string,
      jwksUrl: httpUrl(env, 'OIDC_JWKS_URL'),
      audience,
      usernameClaim: text(env, 'OIDC_USERNAME_CLAIM') ?? 'preferred_username',
      clientId: text(env, 'OIDC_CLIENT_ID'),
      clientSecret: text(env, 'OIDC_CLIENT_SECRET'),
      groupsClaim: text(env, 'OIDC_GROUPS_CLAIM') ?? 'groups',
      clockSkewSeconds: Number(skew),
      jwksCooldownSeconds: Number(cooldown),
    };
  } else if (text(env, 'OIDC_AUDIENCE') || text(env, 'OIDC_JWKS_URL')) {
    throw new ConfigError('OIDC_ISSUER', 'is required when OIDC_AUDIENCE or OIDC_JWKS_URL is set');
  }
  return { header, oidc, adminGroups: list(env, 'SSO_ADMIN_GROUPS'), fieldMap: parseFieldMap(env) };
}
