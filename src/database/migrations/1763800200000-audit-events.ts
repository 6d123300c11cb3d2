import { MigrationInterface, QueryRunner } from 'typeorm';

export class AuditEvents1763800200000 implements MigrationInterface {
  name = 'AuditEvents1763800200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "audit_events" (
        "id" BIGSERIAL NOT NULL,
        "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "actor" character varying(255),
        "action" character varying(64) NOT NULL,
        "target" character varying(255),
        "outcome" character varying(16) NOT NULL,
        "client_address" character varying(64),
        "request_id" character varying(128),
        "details" jsonb NOT NULL,
        CONSTRAINT "PK_audit_events" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`CREATE INDEX "IDX_audit_events_at" ON "audit_events" ("at")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_actor_at" ON "audit_events" ("actor", "at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_audit_events_action_at" ON "audit_events" ("action", "at")`,
    );
    // Append-only: the database itself refuses to change or remove a recorded event.
    await queryRunner.query(`
      CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit_events is append-only';
      END
      $$`);
    await queryRunner.query(`
      CREATE TRIGGER "audit_events_append_only" BEFORE UPDATE OR DELETE ON "audit_events"
      FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "audit_events"`);
    await queryRunner.query(`DROP FUNCTION audit_events_append_only()`);
  }
}
