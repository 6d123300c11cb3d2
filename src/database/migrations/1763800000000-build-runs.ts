import { MigrationInterface, QueryRunner } from 'typeorm';

export class BuildRuns1763800000000 implements MigrationInterface {
  name = 'BuildRuns1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "build_runs" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "status" character varying(16) NOT NULL,
        "requested_by" character varying(255),
        "queued_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "started_at" TIMESTAMP WITH TIME ZONE,
        "finished_at" TIMESTAMP WITH TIME ZONE,
        "error" text,
        "models" jsonb NOT NULL,
        "environment_file" character varying(255),
        CONSTRAINT "PK_build_runs" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(
      `CREATE INDEX "IDX_build_runs_queued_at" ON "build_runs" ("queued_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "build_runs"`);
  }
}
