import { AuditEvent } from '@/audit/audit-event.entity';
import { AccessToken } from '@/auth/access-token.entity';
import { LoginFailure } from '@/auth/login-failure.entity';
import { BuildRun } from '@/builds/build-run.entity';
import { BuildRuns1763800000000 } from '@/database/migrations/1763800000000-build-runs';
import { UsersAndTokens1763800100000 } from '@/database/migrations/1763800100000-users-and-tokens';
import { AuditEvents1763800200000 } from '@/database/migrations/1763800200000-audit-events';
import { User } from '@/users/user.entity';

/** Every entity and every migration, in order. A test fails when the two disagree. */
export const ENTITIES = [BuildRun, User, AccessToken, LoginFailure, AuditEvent];
export const MIGRATIONS = [
  BuildRuns1763800000000,
  UsersAndTokens1763800100000,
  AuditEvents1763800200000,
];
