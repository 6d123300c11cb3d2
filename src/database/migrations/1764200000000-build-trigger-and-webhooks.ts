import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ids of embedding tokens revoked before they expire (kept until they would have expired). What started each build (`request`, `schedule`, `start`, `operator`; null for builds from before), and the
 * deliveries of build notifications to the deployment's webhooks, with their attempts and last failure, for
 * administrators to read in the build history.
 */
export class BuildTriggerAndWebhooks1764200000000 implements MigrationInterface {
  name = 'BuildTriggerAndWebhooks1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "build_runs" ADD COLUMN "trigger" character varying(16)`);
    await queryRunner.query(
      `CREATE TABLE "webhook_deliveries" (
        "id" uuid NOT NULL,
        "event_id" uuid NOT NULL,
        "event_type" character varying(32) NOT NULL,
        "build_id" uuid NOT NULL,
        "endpoint" integer NOT NULL,
        "origin" character varying(255) NOT NULL,
        "status" character varying(16) NOT NULL,
        "attempts" integer NOT NULL DEFAULT 0,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "last_attempt_at" TIMESTAMP WITH TIME ZONE,
        "last_status_code" integer,
        "last_error" text,
        CONSTRAINT "PK_webhook_deliveries" PRIMARY KEY ("id")
      )`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_webhook_deliveries_build" ON "webhook_deliveries" ("build_id")`,
    );
    await queryRunner.query(
      `CREATE TABLE "embed_revocations" (
        "token_id" character varying(128) NOT NULL,
        "revoked_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "revoked_by" character varying(255),
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_embed_revocations" PRIMARY KEY ("token_id")
      )`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "embed_revocations"`);
    await queryRunner.query(`DROP INDEX "IDX_webhook_deliveries_build"`);
    await queryRunner.query(`DROP TABLE "webhook_deliveries"`);
    await queryRunner.query(`ALTER TABLE "build_runs" DROP COLUMN "trigger"`);
  }
}
