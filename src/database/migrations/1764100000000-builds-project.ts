import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The project each build belongs to (its name and major version, `expenses v1`), in the two tables replicas
 * share: a stored build is fetched only by replicas of its project, and a project's history and unfinished
 * runs are its own, when projects share one Postgres. Rows from before have none: stored builds are then
 * never fetched again and are pruned as builds of the project are published; runs stay in every history.
 */
export class BuildsProject1764100000000 implements MigrationInterface {
  name = 'BuildsProject1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "environment_files" ADD COLUMN "project" character varying(100)`,
    );
    // What every replica asks twice a second: its project's newest build.
    await queryRunner.query(
      `CREATE INDEX "IDX_environment_files_project" ON "environment_files" ("project", "published_at")`,
    );
    await queryRunner.query(`ALTER TABLE "build_runs" ADD COLUMN "project" character varying(100)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "build_runs" DROP COLUMN "project"`);
    await queryRunner.query(`DROP INDEX "IDX_environment_files_project"`);
    await queryRunner.query(`ALTER TABLE "environment_files" DROP COLUMN "project"`);
  }
}
