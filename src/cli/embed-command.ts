import { randomUUID } from 'node:crypto';
import { AuditService } from '@/audit/audit.service';
import { signEmbedToken } from '@/auth/embed-tokens.service';
import { JwtKeys } from '@/auth/jwt-keys';
import type { CliArgs } from '@/cli/cli-args';
import type { CliOutput } from '@/cli/cli-output';
import { openServiceDatabase } from '@/cli/service-database';
import type { AppConfig } from '@/config/config';
import { resolveSecrets } from '@/config/secrets';
import { ISSUED_BY_OPERATOR } from '@/core/embedding/embed-claims';
import { issuedDetails, planEmbedToken } from '@/core/embedding/embed-token-plan';
import { formatTimestamp } from '@/core/timestamps';
import { loadProject } from '@/core/project/project-loader';
import { AuditEventsRepository } from '@/database/tables/audit-events.repository';
import { Transactions } from '@/database/transactions/transactions';
import { JsonLogger } from '@/runtime/json-logger';

/** Who the audit log names for a token the CLI issues: whoever runs it has the service's secret. */
const ACTOR = 'cli';

/** A value as the command line gives it: JSON when it parses (100, true, ["0","1"]), text otherwise. */
function valueOf(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function valuesOf(entries: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).map(([name, text]) => [name, valueOf(text)]));
}

/**
 * `drey embed-token dataset|dashboard <name>`: the token POST P/embed-tokens would issue, checked against
 * the project, signed with the service's JWT key and recorded in its audit log.
 */
export async function embedTokenCommand(
  config: AppConfig,
  args: CliArgs,
  output: CliOutput,
): Promise<void> {
  const item = args.embed;
  if (!item) throw new Error('embed-token needs an item');
  const project = loadProject(args.project ?? config.projectDir);
  const plan = planEmbedToken(
    project,
    {
      [item.kind]: item.name,
      params: valuesOf(args.params),
      defaults: valuesOf(args.defaults),
      user: valuesOf(args.userFields),
      subject: args.subject,
      expiry_minutes: args.minutes,
    },
    {
      maxMinutes: config.embedding.maxMinutes,
      id: randomUUID(),
      now: new Date(),
      issuedBy: ISSUED_BY_OPERATOR,
    },
  );
  const token = await signEmbedToken(plan, new JwtKeys(resolveSecrets(config)).current);
  const database = await openServiceDatabase(config, 'drey embed-token', output);
  try {
    const audit = new AuditService(
      new AuditEventsRepository(database.dataSource),
      new Transactions(database.dataSource),
      new JsonLogger('error', (line) => output.err(line.trimEnd())),
    );
    await audit.record({
      action: 'embed_token.create',
      actor: ACTOR,
      target: plan.id,
      details: issuedDetails(plan),
    });
  } finally {
    await database.close();
  }
  output.out(
    JSON.stringify({
      token,
      id: plan.id,
      expires_at: formatTimestamp(plan.expiresAt),
      resource: { [plan.kind]: plan.name },
    }),
  );
}
