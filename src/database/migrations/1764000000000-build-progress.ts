import { MigrationInterface, QueryRunner } from 'typeorm';

/** A build's progress while it runs (and where it stopped when it failed), seen by every replica. */
export class BuildProgress1764000000000 implements MigrationInterface {
  name = 'BuildProgress1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "build_runs" ADD "progress" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "build_runs" DROP COLUMN "progress"`);
  }
}
