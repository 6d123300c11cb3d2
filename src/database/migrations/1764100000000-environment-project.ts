import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The project each stored build belongs to (its name and major version, `expenses v1`): replicas that share
 * one Postgres but serve different projects fetch only their own project's builds. Rows stored before it
 * have none, and no replica fetches them again; they are pruned as builds of the project are published.
 */
export class EnvironmentProject1764100000000 implements MigrationInterface {
  name = 'EnvironmentProject1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "environment_files" ADD COLUMN "project" character varying(100)`,
    );
    // What every replica asks twice a second: its project's newest build.
    await queryRunner.query(
      `CREATE INDEX "IDX_environment_files_project" ON "environment_files" ("project", "published_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_environment_files_project"`);
    await queryRunner.query(`ALTER TABLE "environment_files" DROP COLUMN "project"`);
  }
}
