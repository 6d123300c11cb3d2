import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Whose fault a failed build is (`project`, `infrastructure`, `interrupted`): the replica that answers a
 * waiting `POST P/build` is not always the one that ran the build, so the runner records it with the run,
 * and the answer is a 400 for the project's fault rather than the 500 of a server's. Null for runs from
 * before, which answer as they did.
 */
export class BuildFault1764400000000 implements MigrationInterface {
  name = 'BuildFault1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "build_runs" ADD COLUMN "fault" character varying(16)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "build_runs" DROP COLUMN "fault"`);
  }
}
