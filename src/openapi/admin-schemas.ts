import type { SchemaObject } from '@nestjs/swagger';
import { object, Schemas } from '@/openapi/common-schemas';

/** OpenAPI schemas of the administrators' endpoints: build history, audit log, readiness. */

const TIME: SchemaObject = { type: 'string', format: 'date-time', nullable: true };
const TEXT: SchemaObject = { type: 'string', nullable: true };

export const ADMIN_SCHEMAS: Schemas = {
  BuildRun: object(
    {
      id: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
      trigger: {
        type: 'string',
        nullable: true,
        enum: ['request', 'schedule', 'start', 'operator', null],
        description:
          'What started it: POST P/build (`request`), the build schedule, the first start of a service ' +
          'with no build, or the operator (SIGHUP, `drey dev`). Null for builds from before.',
      },
      requested_by: TEXT,
      queued_at: { type: 'string', format: 'date-time' },
      started_at: TIME,
      finished_at: TIME,
      duration_ms: { type: 'integer', nullable: true },
      error: TEXT,
      fault: {
        type: 'string',
        nullable: true,
        enum: ['project', 'infrastructure', 'interrupted', null],
        description:
          "A failed build's: the project's (its SQL or files; a waiting POST P/build answered 400 " +
          "`invalid_project`), the infrastructure's (a source, a database or a disk it needed; 500 " +
          '`build_failed`) or `interrupted` (the server stopped; 503 `build_interrupted`). Null otherwise, ' +
          'and for builds from before.',
      },
      progress: {
        type: 'object',
        nullable: true,
        description:
          'Running: models done of total, the model being built and the time since the start. Failed: ' +
          'how far it got and the model it failed on. Null otherwise.',
        properties: {
          done: { type: 'integer' },
          total: { type: 'integer', nullable: true },
          current_model: TEXT,
          current_kind: TEXT,
          elapsed_ms: { type: 'integer', nullable: true },
          failed_model: TEXT,
        },
      },
      models: {
        description: 'The models built so far (all of them once it succeeded)',
        type: 'array',
        items: object({
          model: { type: 'string' },
          kind: { type: 'string' },
          rows: { type: 'integer' },
          duration_ms: { type: 'integer' },
        }),
      },
      notifications: {
        description:
          "The deliveries of this build's event to the deployment's webhooks (WEBHOOK_URLS), one per " +
          'endpoint; empty when none are configured',
        type: 'array',
        items: object({
          event: { type: 'string', enum: ['build.succeeded', 'build.failed'] },
          event_id: { type: 'string', format: 'uuid', description: 'Sent as `webhook-id`' },
          endpoint: { type: 'integer', description: 'Its place in WEBHOOK_URLS, from 1' },
          origin: { type: 'string', description: "The endpoint's origin (its path is not shown)" },
          status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
          attempts: { type: 'integer' },
          last_attempt_at: TIME,
          last_status_code: { type: 'integer', nullable: true },
          last_error: TEXT,
        }),
      },
    },
    'One build, with its progress, the rows and duration of each model built, and its notifications',
  ),
  EmbedToken: object(
    {
      token: {
        type: 'string',
        description: 'The JWT: a bearer token, or `x_embed_token` of a GET',
      },
      id: { type: 'string', format: 'uuid', description: 'Its `jti`: DELETE P/embed-tokens/{id}' },
      expires_at: { type: 'string', format: 'date-time' },
      resource: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: '`{"dataset": name}` or `{"dashboard": name}`',
      },
    },
    'An embedding token',
  ),
  AuditPage: object({
    events: {
      type: 'array',
      items: object({
        id: { type: 'integer' },
        at: { type: 'string', format: 'date-time' },
        actor: TEXT,
        action: { type: 'string' },
        target: TEXT,
        outcome: { type: 'string', enum: ['success', 'failure'] },
        client_address: TEXT,
        request_id: TEXT,
        details: { type: 'object', additionalProperties: true },
      }),
    },
    next_offset: {
      type: 'integer',
      nullable: true,
      description: 'The offset of the next page; null on the last one',
    },
  }),
  Readiness: object({
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['status'],
        properties: {
          status: {
            type: 'string',
            enum: ['up', 'down', 'degraded'],
            description:
              'down makes the replica not ready; degraded (the PNG renderer) only says what does not work here',
          },
          kind: { type: 'string' },
          detail: { type: 'string' },
          build: { type: 'string', description: 'The build served (environment check)' },
        },
      },
    },
  }),
};
