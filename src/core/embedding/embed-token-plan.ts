import type { EmbedValue } from '@/core/caller';
import { InvalidRequestError } from '@/core/errors';
import type { Project } from '@/core/project/project';
import { embedAttributes } from '@/core/embedding/embed-caller';
import { EmbedClaimsError, embedProject, parseEmbedClaims } from '@/core/embedding/embed-claims';

/**
 * What an administrator asks for, its shape already checked by the door it came through (`POST
 * P/embed-tokens`'s DTO, `drey embed-token`'s options). The values of `params`, `defaults` and `user` are
 * checked here, as a token's claims are.
 */
export interface EmbedTokenRequest {
  dataset?: string;
  dashboard?: string;
  params?: Record<string, unknown>;
  defaults?: Record<string, unknown>;
  user?: Record<string, unknown>;
  subject?: string;
  expiry_minutes?: number;
}

/** The claims of a token Drey signs for an administrator, checked against the project. */
export interface EmbedTokenPlan {
  claims: Record<string, unknown>;
  id: string;
  expiresAt: Date;
  kind: 'dataset' | 'dashboard';
  name: string;
  locked: Record<string, EmbedValue>;
}

/** What the audit log records of an issued token: the item, the values it locks, when it expires. */
export function issuedDetails(plan: EmbedTokenPlan): Record<string, unknown> {
  return {
    kind: plan.kind,
    item: plan.name,
    locked: plan.locked,
    expiresAt: plan.expiresAt.toISOString(),
  };
}

/** Minutes an administrator's token lives unless asked otherwise. */
export const DEFAULT_EMBED_MINUTES = 10;

/**
 * The claims of an embedding token for `request`: an item of `project` (400 otherwise), parameters it has,
 * attributes that are user fields, a lifetime from 1 to `maxMinutes` (400 otherwise).
 */
export function planEmbedToken(
  project: Project,
  request: EmbedTokenRequest,
  options: {
    maxMinutes: number;
    id: string;
    now: Date;
    /** The `by` claim: the administrator's user id, or {@link ISSUED_BY_OPERATOR}. */
    issuedBy: string;
  },
): EmbedTokenPlan {
  if ((request.dataset === undefined) === (request.dashboard === undefined)) {
    throw new InvalidRequestError('Name one item: "dataset" or "dashboard"');
  }
  const kind = request.dataset !== undefined ? 'dataset' : 'dashboard';
  const name = kind === 'dataset' ? request.dataset : request.dashboard;
  const items: { name: string; parameters: string[] }[] =
    kind === 'dataset' ? project.datasets : project.dashboards;
  const item = items.find((candidate) => candidate.name === name);
  if (!item) {
    throw new InvalidRequestError(
      `The project has no ${kind} named ${JSON.stringify(String(name).slice(0, 100))}`,
    );
  }
  const minutes = request.expiry_minutes ?? DEFAULT_EMBED_MINUTES;
  const max = options.maxMinutes;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > max) {
    throw new InvalidRequestError(
      `expiry_minutes must be a whole number from 1 to ${max} (EMBED_TOKEN_MAX_MINUTES)`,
    );
  }
  const expiresAt = new Date(options.now.getTime() + minutes * 60_000);
  const claims: Record<string, unknown> = {
    project: embedProject(project),
    by: options.issuedBy,
    resource: { [kind]: item.name },
    params: request.params ?? {},
    defaults: request.defaults ?? {},
    user: request.user ?? {},
    jti: options.id,
  };
  if (request.subject !== undefined) claims.sub = request.subject;
  try {
    const parsed = parseEmbedClaims(claims);
    const unknown = [
      ...Object.keys(parsed.grant.locked),
      ...Object.keys(parsed.grant.defaults),
    ].find((parameter) => !item.parameters.includes(parameter));
    if (unknown) {
      throw new InvalidRequestError(`The ${kind} "${item.name}" has no parameter "${unknown}"`);
    }
    embedAttributes(parsed.user, project.userFields);
    return {
      claims,
      id: options.id,
      expiresAt,
      kind,
      name: item.name,
      locked: parsed.grant.locked,
    };
  } catch (error) {
    if (error instanceof EmbedClaimsError) {
      throw new InvalidRequestError(error.message.replace("The token's", "The request's"));
    }
    throw error;
  }
}
