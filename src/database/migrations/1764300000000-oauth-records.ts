import { MigrationInterface, QueryRunner } from 'typeorm';

/** The authorization server's records (oauth_records.entity.ts): sessions, grants, codes, tokens, clients. */
export class OAuthRecords1764300000000 implements MigrationInterface {
  name = 'OAuthRecords1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "oauth_records" (
        "model" character varying(32) NOT NULL,
        "id" character varying(255) NOT NULL,
        "payload" jsonb NOT NULL,
        "grant_id" character varying(255),
        "uid" character varying(255),
        "user_code" character varying(255),
        "account_id" character varying(255),
        "expires_at" TIMESTAMP WITH TIME ZONE,
        "consumed_at" TIMESTAMP WITH TIME ZONE,
        "used_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_oauth_records" PRIMARY KEY ("model", "id")
      )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_oauth_records_grant" ON "oauth_records" ("grant_id")`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_oauth_records_uid" ON "oauth_records" ("uid")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_oauth_records_account" ON "oauth_records" ("model", "account_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_oauth_records_expires_at" ON "oauth_records" ("expires_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "oauth_records"`);
  }
}
