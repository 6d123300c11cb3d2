import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A record as the authorization server's library stores it: its payload and what it is found by. */
export interface OAuthRecordPayload extends Record<string, unknown> {
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  consumed?: number;
}

/**
 * The `oauth_records` table (oauth-records.entity.ts), in plain SQL: the storage of oidc-provider's
 * adapter (oauth/postgres-adapter.ts) and what Drey reads of it itself (a person's grants, a token's last
 * use). An expired record is never returned; {@link prune} removes them.
 */
@Injectable()
export class OAuthRecordsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async upsert(
    model: string,
    id: string,
    payload: OAuthRecordPayload,
    expiresInSeconds: number | undefined,
  ): Promise<void> {
    const expiresAt =
      expiresInSeconds === undefined ? null : new Date(Date.now() + expiresInSeconds * 1000);
    await this.dataSource.query(
      `INSERT INTO "oauth_records" ("model", "id", "payload", "grant_id", "uid", "user_code", "account_id", "expires_at")
       VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8)
       ON CONFLICT ("model", "id") DO UPDATE SET "payload" = EXCLUDED."payload",
         "grant_id" = EXCLUDED."grant_id", "uid" = EXCLUDED."uid", "user_code" = EXCLUDED."user_code",
         "account_id" = EXCLUDED."account_id", "expires_at" = EXCLUDED."expires_at"`,
      [
        model,
        id,
        JSON.stringify(payload),
        payload.grantId ?? null,
        payload.uid ?? null,
        payload.userCode ?? null,
        payload.accountId ?? null,
        expiresAt,
      ],
    );
  }

  find(model: string, id: string): Promise<OAuthRecordPayload | undefined> {
    return this.one(`"model" = $1 AND "id" = $2`, [model, id]);
  }

  findByUid(model: string, uid: string): Promise<OAuthRecordPayload | undefined> {
    return this.one(`"model" = $1 AND "uid" = $2`, [model, uid]);
  }

  findByUserCode(model: string, userCode: string): Promise<OAuthRecordPayload | undefined> {
    return this.one(`"model" = $1 AND "user_code" = $2`, [model, userCode]);
  }

  /** Marks a record used (an authorization code, a rotated refresh token): the library refuses it again. */
  async consume(model: string, id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE "oauth_records" SET "consumed_at" = now(),
         "payload" = "payload" || jsonb_build_object('consumed', floor(extract(epoch from now()))::bigint)
       WHERE "model" = $1 AND "id" = $2`,
      [model, id],
    );
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "oauth_records" WHERE "model" = $1 AND "id" = $2`, [
      model,
      id,
    ]);
  }

  /** Every record of a grant, whatever its model: its codes and tokens end with it. */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.dataSource.query(`DELETE FROM "oauth_records" WHERE "grant_id" = $1`, [grantId]);
  }

  /** The live records of one model for an account (a person's grants), newest first. */
  async listByAccount(
    model: string,
    accountId: string,
    limit: number,
  ): Promise<{ id: string; payload: OAuthRecordPayload; createdAt: Date; usedAt: Date | null }[]> {
    const rows = await this.dataSource.query<
      { id: string; payload: OAuthRecordPayload; created_at: Date; used_at: Date | null }[]
    >(
      `SELECT "id", "payload", "created_at", "used_at" FROM "oauth_records"
       WHERE "model" = $1 AND "account_id" = $2 AND ("expires_at" IS NULL OR "expires_at" > now())
       ORDER BY "created_at" DESC LIMIT $3`,
      [model, accountId, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      payload: row.payload,
      createdAt: new Date(row.created_at),
      usedAt: row.used_at === null ? null : new Date(row.used_at),
    }));
  }

  /**
   * Notes that a record was used now, at most once a minute per record (a read path writes it); with
   * `extendSeconds`, it lives that long from now (a registered client that is used is kept).
   */
  async touch(model: string, id: string, extendSeconds?: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "oauth_records" SET "used_at" = now(),
         "expires_at" = CASE WHEN $3::int IS NULL THEN "expires_at" ELSE now() + make_interval(secs => $3::int) END
       WHERE "model" = $1 AND "id" = $2 AND ("used_at" IS NULL OR "used_at" < now() - interval '1 minute')`,
      [model, id, extendSeconds ?? null],
    );
  }

  /** Inserts a record unless one with its id exists; the record kept either way. */
  async findOrInsert(
    model: string,
    id: string,
    payload: OAuthRecordPayload,
  ): Promise<OAuthRecordPayload> {
    await this.dataSource.query(
      `INSERT INTO "oauth_records" ("model", "id", "payload") VALUES ($1, $2, $3::jsonb)
       ON CONFLICT ("model", "id") DO NOTHING`,
      [model, id, JSON.stringify(payload)],
    );
    return (await this.find(model, id)) as OAuthRecordPayload;
  }

  /** How many live records of a model there are (registered clients, for the registration bound). */
  async count(model: string): Promise<number> {
    const [row] = await this.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS "n" FROM "oauth_records"
       WHERE "model" = $1 AND ("expires_at" IS NULL OR "expires_at" > now())`,
      [model],
    );
    return row.n;
  }

  /** Removes expired records. */
  async prune(): Promise<void> {
    await this.dataSource.query(`DELETE FROM "oauth_records" WHERE "expires_at" <= now()`);
  }

  private async one(where: string, values: unknown[]): Promise<OAuthRecordPayload | undefined> {
    const rows = await this.dataSource.query<{ payload: OAuthRecordPayload }[]>(
      `SELECT "payload" FROM "oauth_records" WHERE ${where}
         AND ("expires_at" IS NULL OR "expires_at" > now()) LIMIT 1`,
      values,
    );
    return rows[0]?.payload;
  }
}
