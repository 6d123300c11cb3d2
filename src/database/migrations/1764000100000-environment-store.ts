import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Built environments, stored where every replica can fetch them (see EnvironmentStore): one row per
 * published build with its size and checksum, and its bytes in chunks.
 */
export class EnvironmentStore1764000100000 implements MigrationInterface {
  name = 'EnvironmentStore1764000100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "environment_files" (
        "build_id" character varying(100) NOT NULL,
        "size" bigint NOT NULL,
        "sha256" character(64) NOT NULL,
        "published_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_environment_files" PRIMARY KEY ("build_id")
      )`);
    await queryRunner.query(`
      CREATE TABLE "environment_chunks" (
        "build_id" character varying(100) NOT NULL,
        "seq" integer NOT NULL,
        "data" bytea NOT NULL,
        CONSTRAINT "PK_environment_chunks" PRIMARY KEY ("build_id", "seq")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "environment_chunks"`);
    await queryRunner.query(`DROP TABLE "environment_files"`);
  }
}
