import type {
  OAuthRecordPayload,
  OAuthRecordsRepository,
} from '@/database/tables/oauth-records.repository';

/** What oidc-provider asks of its storage, per model (its `adapter` option). */
export interface OidcAdapter {
  upsert(id: string, payload: OAuthRecordPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<OAuthRecordPayload | undefined>;
  findByUserCode(userCode: string): Promise<OAuthRecordPayload | undefined>;
  findByUid(uid: string): Promise<OAuthRecordPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * The library's storage adapter on Postgres (`oauth_records`), so that every replica answers every step
 * of a sign-in. One instance per model (Session, Interaction, Grant, AuthorizationCode, AccessToken,
 * RefreshToken, Client...). Registered clients (`Client`) are kept `clientSeconds` from their last use,
 * then forgotten: registrations nobody uses do not pile up.
 */
export function postgresAdapter(
  records: OAuthRecordsRepository,
  clientSeconds: number,
): new (model: string) => OidcAdapter {
  return class PostgresAdapter implements OidcAdapter {
    constructor(private readonly model: string) {}

    upsert(id: string, payload: OAuthRecordPayload, expiresIn?: number): Promise<void> {
      const seconds = this.model === 'Client' ? (expiresIn ?? clientSeconds) : expiresIn;
      return records.upsert(this.model, id, payload, seconds);
    }

    async find(id: string): Promise<OAuthRecordPayload | undefined> {
      const found = await records.find(this.model, id);
      if (found !== undefined && this.model === 'Client') {
        await records.touch(this.model, id, clientSeconds);
      }
      return found;
    }

    findByUserCode(userCode: string): Promise<OAuthRecordPayload | undefined> {
      return records.findByUserCode(this.model, userCode);
    }

    findByUid(uid: string): Promise<OAuthRecordPayload | undefined> {
      return records.findByUid(this.model, uid);
    }

    consume(id: string): Promise<void> {
      return records.consume(this.model, id);
    }

    destroy(id: string): Promise<void> {
      return records.destroy(this.model, id);
    }

    revokeByGrantId(grantId: string): Promise<void> {
      return records.revokeByGrantId(grantId);
    }
  };
}
