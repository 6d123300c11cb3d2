import { AuditEvent } from '@/database/tables/audit-events.entity';
import { AccessToken } from '@/database/tables/access-tokens.entity';
import { BuildRun } from '@/database/tables/build-runs.entity';
import { LoginFailure } from '@/database/tables/login-failures.entity';
import { User } from '@/database/tables/users.entity';
import { WebhookDelivery } from '@/database/tables/webhook-deliveries.entity';
import { EmbedRevocation } from '@/database/tables/embed-revocations.entity';
import { OAuthRecord } from '@/database/tables/oauth-records.entity';
import { BuildRuns1763800000000 } from '@/database/migrations/1763800000000-build-runs';
import { UsersAndTokens1763800100000 } from '@/database/migrations/1763800100000-users-and-tokens';
import { AuditEvents1763800200000 } from '@/database/migrations/1763800200000-audit-events';
import { BuildProgress1764000000000 } from '@/database/migrations/1764000000000-build-progress';
import { EnvironmentStore1764000100000 } from '@/database/migrations/1764000100000-environment-store';
import { BuildsProject1764100000000 } from '@/database/migrations/1764100000000-builds-project';
import { BuildTriggerAndWebhooks1764200000000 } from '@/database/migrations/1764200000000-build-trigger-and-webhooks';
import { OAuthRecords1764300000000 } from '@/database/migrations/1764300000000-oauth-records';
import { BuildFault1764400000000 } from '@/database/migrations/1764400000000-build-fault';

/** Every entity and every migration, in order. A test fails when the two disagree. */
export const ENTITIES = [
  BuildRun,
  User,
  AccessToken,
  LoginFailure,
  AuditEvent,
  WebhookDelivery,
  EmbedRevocation,
  OAuthRecord,
];
export const MIGRATIONS = [
  BuildRuns1763800000000,
  UsersAndTokens1763800100000,
  AuditEvents1763800200000,
  BuildProgress1764000000000,
  EnvironmentStore1764000100000,
  BuildsProject1764100000000,
  BuildTriggerAndWebhooks1764200000000,
  OAuthRecords1764300000000,
  BuildFault1764400000000,
];
