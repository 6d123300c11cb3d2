import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { userCaller, type Caller } from '@/core/caller';
import { SsoIdentity, checkFieldMap, mapIdentity, splitGroups } from '@/auth/sso/identity';
import { OidcVerifier, identityOfClaims } from '@/auth/sso/oidc-verifier';
import { InvalidTokenError } from '@/core/errors';
import { JsonLogger } from '@/runtime/json-logger';
import { clientAddress } from '@/http/request/client-address';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { ServedProject } from '@/core/project/served-project';
import { USERNAME } from '@/users/user-fields.rules';
import { UsersRepository } from '@/database/tables/users.repository';
import { TokenRecords } from '@/database/token-records/token-records';

/**
 * Single sign-on: identity headers from trusted proxies, and identity-provider bearer tokens. Both become
 * the same Caller as a local login; users seen for the first time get a row without a password.
 */
@Injectable()
export class SsoService implements OnModuleInit {
  private readonly oidc?: OidcVerifier;

  constructor(
    private readonly users: UsersRepository,
    private readonly logger: JsonLogger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly served: ServedProject,
    private readonly tokenRecords: TokenRecords,
  ) {
    if (config.sso.oidc) this.oidc = new OidcVerifier(config.sso.oidc);
  }

  onModuleInit(): void {
    const problems = checkFieldMap(this.config.sso, this.served.current.userFields);
    if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }

  get oidcEnabled(): boolean {
    return this.oidc !== undefined;
  }

  /** The caller of an identity-provider token; 401 when it fails any check. */
  async fromIdpToken(token: string): Promise<Caller> {
    if (!this.oidc) throw new InvalidTokenError();
    const identity = await this.oidc.verify(token);
    const caller = await this.provision(identity);
    if (!caller) throw new InvalidTokenError('This identity belongs to a local user');
    return caller;
  }

  /**
   * The user of an identity provider's ID token claims, checked by the OpenID client that received them
   * (Drey's sign-in page sends a person to the provider: sign-in/federation.ts), mapped and provisioned as
   * every SSO mode does; undefined when the name belongs to a password user.
   */
  async fromSignInClaims(claims: Record<string, unknown>): Promise<Caller | undefined> {
    if (!this.config.sso.oidc) return undefined;
    return this.provision(identityOfClaims(claims, this.config.sso.oidc));
  }

  /**
   * The caller asserted by identity headers, when the request comes straight from a trusted proxy (and
   * carries the shared secret, when one is configured). Headers from anywhere else are ignored and logged.
   */
  async fromHeaders(request: IncomingMessage): Promise<Caller | undefined> {
    const header = this.config.sso.header;
    if (!header) return undefined;
    const username = single(request.headers[header.userHeader]);
    if (username === undefined) return undefined;
    const peer = clientAddress(request);
    const family = peer.includes(':') ? 'ipv6' : 'ipv4';
    if (!header.proxies.check(peer, family)) {
      this.logger.emit('warn', 'identity headers ignored: not from a trusted proxy', {
        address: peer,
      });
      return undefined;
    }
    if (
      header.secretHeader &&
      header.secret &&
      !sameSecret(single(request.headers[header.secretHeader]), header.secret)
    ) {
      this.logger.emit('warn', 'identity headers ignored: missing or wrong proxy secret', {
        address: peer,
      });
      return undefined;
    }
    if (!USERNAME.test(username)) {
      this.logger.emit('warn', 'identity headers ignored: unusable user name', { address: peer });
      return undefined;
    }
    const identity: SsoIdentity = {
      username,
      email: single(request.headers[header.emailHeader]),
      groups: splitGroups(single(request.headers[header.groupsHeader])),
      source: 'header',
    };
    return this.provision(identity);
  }

  /** Creates or updates the user of an SSO identity; undefined when the name belongs to a password user. */
  private async provision(identity: SsoIdentity): Promise<Caller | undefined> {
    const mapped = mapIdentity(identity, this.config.sso, this.served.current.userFields);
    // Concurrent first requests of one user: the insert is idempotent, the read finds the winner.
    await this.users.insertIfNameFree({
      username: identity.username,
      isAdmin: mapped.isAdmin,
      passwordHash: null,
      fields: mapped.fields,
    });
    const user = await this.users.findByUsername(identity.username);
    if (!user || user.passwordHash !== null) {
      this.logger.emit('warn', 'SSO identity refused: the name belongs to a local user', {
        username: identity.username,
        source: identity.source,
      });
      return undefined;
    }
    const changed =
      user.isAdmin !== mapped.isAdmin ||
      Object.entries(mapped.fields).some(([name, value]) => user.fields[name] !== value);
    if (changed) {
      await this.users.updateProfile(user.id, mapped.isAdmin, mapped.fields);
      // The user's named tokens carry the new rights from every process's next request.
      await this.tokenRecords.changed();
    }
    return userCaller(
      { id: user.id, username: identity.username, isAdmin: mapped.isAdmin, fields: mapped.fields },
      this.served.current.userFields,
      null,
    );
  }
}

function single(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const trimmed = text?.trim();
  return trimmed ? trimmed : undefined;
}

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
