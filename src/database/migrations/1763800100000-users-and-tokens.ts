import { MigrationInterface, QueryRunner } from 'typeorm';

export class UsersAndTokens1763800100000 implements MigrationInterface {
  name = 'UsersAndTokens1763800100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "users" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "username" character varying(255) NOT NULL,
        "is_admin" boolean NOT NULL DEFAULT false,
        "password_hash" text,
        "fields" jsonb NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_users" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "UQ_users_username" ON "users" ("username")`);
    await queryRunner.query(`
      CREATE TABLE "access_tokens" (
        "id" uuid NOT NULL,
        "user_id" uuid NOT NULL,
        "title" character varying(255),
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "expires_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_access_tokens" PRIMARY KEY ("id"),
        CONSTRAINT "FK_access_tokens_user" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(
      `CREATE INDEX "IDX_access_tokens_user_id" ON "access_tokens" ("user_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_access_tokens_expires_at" ON "access_tokens" ("expires_at")`,
    );
    await queryRunner.query(`
      CREATE TABLE "login_failures" (
        "id" BIGSERIAL NOT NULL,
        "key" character varying(300) NOT NULL,
        "failed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_login_failures" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(
      `CREATE INDEX "IDX_login_failures_key_at" ON "login_failures" ("key", "failed_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "login_failures"`);
    await queryRunner.query(`DROP TABLE "access_tokens"`);
    await queryRunner.query(`DROP TABLE "users"`);
  }
}
