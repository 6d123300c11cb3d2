import type { Caller, EmbedGrant, EmbedValue } from '@/core/caller';
import { ForbiddenError, InvalidRequestError } from '@/core/errors';
import type { Project } from '@/core/project/project';
import {
  fieldValueProblem,
  type UserField,
  type UserFieldValue,
  withFieldDefaults,
} from '@/core/user-fields';
import { InvalidSelectionError } from '@/core/parameters/parameter-errors';
import type { ParameterRequest, RawSelection } from '@/core/parameters/selection-request';

/**
 * Embedding tokens: signed by Drey for an administrator, or by the host application with the embedding key.
 * Their `aud` says what they are; their claims name one item and the values they lock (docs/embedding.md):
 *
 *   { "aud": "drey-embed", "exp": ..., "jti": "...", "sub": "who views, as the host knows them",
 *     "project": "expenses/v1", "resource": { "dashboard": "expenses_dashboard" },
 *     "params": { "category": ["food"] }, "defaults": { "group_by": "month" },
 *     "user": { "role": "manager" } }
 */
export const EMBED_AUDIENCE = 'drey-embed';

/**
 * The `project` claim a token must carry for `project`: its name and major version, as the legacy layout's
 * path names them. Two deployments that share a signing key then still refuse each other's tokens.
 */
export function embedProject(project: Pick<Project, 'name' | 'majorVersion'>): string {
  return `${project.name}/v${project.majorVersion}`;
}

/** The `by` of a token the command line issued: whoever runs it has the service's secret. */
export const ISSUED_BY_OPERATOR = 'cli';

/** The claims of an embedding token, checked for shape (the item and the fields are checked on use). */
export interface EmbedClaims {
  grant: EmbedGrant;
  /** `project`: the project and major version it was issued for ({@link embedProject}). */
  project: string;
  /**
   * `by`, on the tokens Drey signs: the id of the administrator who asked for it, whose rights are checked
   * at each use, or {@link ISSUED_BY_OPERATOR}. Null on a host application's token.
   */
  issuedBy: string | null;
  /** `sub`: the viewer as the host application names them, for logs and the audit; may be absent. */
  subject: string | null;
  /** `user`: the attributes the project's SQL reads, as a user's fields. */
  user: Record<string, unknown>;
}

/** Why a token's claims are not an embedding's: the 401's message. */
export class EmbedClaimsError extends Error {}

// Bounds of what a token may carry: a header line must stay a header line.
const MAX_PARAMETERS = 64;
const MAX_VALUES = 200;
const MAX_TEXT = 500;
const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/;
/** A token id (`jti`) or a viewer (`sub`): printable, no spaces, a header's worth at most. */
const SUBJECT = /^[\x21-\x7e]{1,128}$/;
/** `project`: a project's name (project.yml's rule) and its major version. */
const PROJECT = /^[\x21-\x7e]{1,128}\/v\d{1,9}$/;

/** Whether `id` can be an embedding token's `jti` (what a revocation names). */
export function isTokenId(id: string): boolean {
  return SUBJECT.test(id);
}

function mapping(value: unknown, claim: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new EmbedClaimsError(`The token's "${claim}" must be an object`);
  }
  const entries = value as Record<string, unknown>;
  if (Object.keys(entries).length > MAX_PARAMETERS) {
    throw new EmbedClaimsError(`The token's "${claim}" names more than ${MAX_PARAMETERS} entries`);
  }
  for (const key of Object.keys(entries)) {
    if (!NAME.test(key)) throw new EmbedClaimsError(`The token's "${claim}" has a bad name`);
  }
  return entries;
}

function scalar(value: unknown): value is string | number | boolean {
  return (
    (typeof value === 'string' && value.length <= MAX_TEXT) ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    typeof value === 'boolean'
  );
}

function values(raw: Record<string, unknown>, claim: string): Record<string, EmbedValue> {
  const out: Record<string, EmbedValue> = {};
  for (const [name, value] of Object.entries(raw)) {
    const ok = Array.isArray(value)
      ? value.length <= MAX_VALUES &&
        value.every((entry) => scalar(entry) && typeof entry !== 'boolean')
      : scalar(value);
    if (!ok) {
      throw new EmbedClaimsError(
        `The token's "${claim}.${name}" must be a string, a number, a boolean or a list of strings or numbers`,
      );
    }
    out[name] = value as EmbedValue;
  }
  return out;
}

/** The embedding that verified claims describe; {@link EmbedClaimsError} when they describe none. */
export function parseEmbedClaims(payload: Record<string, unknown>): EmbedClaims {
  const resource = mapping(payload.resource, 'resource');
  const kinds = Object.keys(resource);
  if (kinds.length !== 1 || (kinds[0] !== 'dataset' && kinds[0] !== 'dashboard')) {
    throw new EmbedClaimsError(
      'The token\'s "resource" must name one dataset or one dashboard: {"dataset": "<name>"}',
    );
  }
  const kind = kinds[0];
  const name = resource[kind];
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new EmbedClaimsError(`The token's "resource.${kind}" must be a name`);
  }
  const locked = values(mapping(payload.params, 'params'), 'params');
  const defaults = values(mapping(payload.defaults, 'defaults'), 'defaults');
  const both = Object.keys(defaults).find((key) => key in locked);
  if (both) {
    throw new EmbedClaimsError(`The token both locks "${both}" and gives it a default`);
  }
  const { jti, sub, project, by } = payload;
  if (typeof project !== 'string' || !PROJECT.test(project)) {
    throw new EmbedClaimsError(
      'The token\'s "project" must name the project it is for, as "<name>/v<major version>"',
    );
  }
  if (by !== undefined && (typeof by !== 'string' || !SUBJECT.test(by))) {
    throw new EmbedClaimsError('The token\'s "by" must be 1-128 printable characters');
  }
  if (jti !== undefined && (typeof jti !== 'string' || !SUBJECT.test(jti))) {
    throw new EmbedClaimsError('The token\'s "jti" must be 1-128 printable characters');
  }
  if (sub !== undefined && (typeof sub !== 'string' || !SUBJECT.test(sub))) {
    throw new EmbedClaimsError('The token\'s "sub" must be 1-128 printable characters');
  }
  return {
    grant: { tokenId: jti ?? null, kind, name, locked, defaults },
    subject: sub ?? null,
    user: mapping(payload.user, 'user'),
    project,
    issuedBy: by ?? null,
  };
}

/**
 * Refuses claims that are not for `project` (another project, or another major version of it) or whose
 * item it does not have: such a token opens nothing here, so it is refused as a token (401), not answered
 * 404 on every item.
 */
export function checkEmbedTarget(claims: EmbedClaims, project: Project): void {
  const expected = embedProject(project);
  if (claims.project !== expected) {
    throw new EmbedClaimsError(
      `The embedding token is for the project "${claims.project}", not "${expected}"`,
    );
  }
  const { kind, name } = claims.grant;
  const items: { name: string }[] = kind === 'dataset' ? project.datasets : project.dashboards;
  if (!items.some((item) => item.name === name)) {
    throw new EmbedClaimsError(
      `The token's "resource" names no ${kind} of this project: "${name}"`,
    );
  }
}

/**
 * The caller an embedding token's checked claims stand for: its viewer, with the project's fields from its
 * `user` attributes ({@link EmbedClaimsError} when one is no field or not of its type), opening its item.
 */
export function embedCaller(claims: EmbedClaims, fields: UserField[]): Caller {
  return {
    username: embedUsername(claims),
    userId: null,
    isAdmin: false,
    fields: embedAttributes(claims.user, fields),
    tokenId: claims.grant.tokenId,
    embed: claims.grant,
  };
}

/** The name an embedding's caller goes by in logs, the audit and `user.username`. */
export function embedUsername(claims: Pick<EmbedClaims, 'subject' | 'grant'>): string {
  return `embed:${claims.subject ?? claims.grant.tokenId ?? claims.grant.name}`;
}

function asRaw(value: EmbedValue): RawSelection {
  return { source: 'body', value };
}

/**
 * The request an embedding's caller makes of its item: a locked parameter may not be sent (400), the
 * locked values are selected, and the defaults fill what the request leaves out. Unchanged for any other
 * caller.
 */
export function embedRequest(
  caller: Caller,
  parameters: readonly string[],
  request: ParameterRequest,
): ParameterRequest {
  const grant = caller.embed;
  if (!grant) return request;
  const locked = Object.keys(grant.locked);
  for (const name of locked) {
    if (!parameters.includes(name)) {
      throw new InvalidSelectionError(
        `The embedding token locks "${name}", which the ${grant.kind} "${grant.name}" does not have`,
      );
    }
    if (request.selections.has(name) || request.parentParam === name) {
      throw new InvalidSelectionError(
        `Parameter "${name}" is locked by the embedding token and cannot be changed`,
      );
    }
  }
  const selections = new Map(request.selections);
  const injected = new Set<string>();
  for (const [name, value] of Object.entries(grant.locked)) {
    selections.set(name, asRaw(value));
    injected.add(name);
  }
  for (const [name, value] of Object.entries(grant.defaults)) {
    if (!selections.has(name) && parameters.includes(name)) {
      selections.set(name, asRaw(value));
      injected.add(name);
    }
  }
  return { ...request, selections, injected };
}

/** The widgets an embedding's caller may choose among: its locked parameters are not shown. */
export function choosableWidgets<W extends { name: string }>(caller: Caller, widgets: W[]): W[] {
  const locked = caller.embed?.locked;
  return locked ? widgets.filter((widget) => !(widget.name in locked)) : widgets;
}

/** Refuses an embedding's caller what belongs to no item (the project's parameters, say). */
export function refuseEmbedded(caller: Caller, what: string): void {
  if (caller.embed) {
    throw new ForbiddenError(
      `An embedding token opens only its ${caller.embed.kind} "${caller.embed.name}", not ${what}`,
    );
  }
}

/**
 * The `user` attributes as a user's fields: each of the project's type and enum, defaults for the others. A
 * name that is no field is refused rather than ignored (a typo would otherwise let a row rule fall back to
 * its default).
 */
export function embedAttributes(
  input: Record<string, unknown>,
  fields: UserField[],
): Record<string, UserFieldValue> {
  const values: Record<string, UserFieldValue> = {};
  for (const [name, value] of Object.entries(input)) {
    const field = fields.find((candidate) => candidate.name === name);
    if (!field) {
      throw new EmbedClaimsError(
        `The embedding's user attribute "${name}" is no user field of the project`,
      );
    }
    const problem = fieldValueProblem(field, value);
    if (problem) throw new EmbedClaimsError(`The embedding's user attribute "${name}" ${problem}`);
    values[name] = value as UserFieldValue;
  }
  return withFieldDefaults(values, fields);
}

/** What an administrator asks for (`POST P/embed-tokens`'s body, `drey embed-token`'s options). */
export interface EmbedTokenRequest {
  dataset?: unknown;
  dashboard?: unknown;
  params?: unknown;
  defaults?: unknown;
  user?: unknown;
  subject?: unknown;
  expiry_minutes?: unknown;
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
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new InvalidRequestError('The body must be a JSON object');
  }
  if ((request.dataset === undefined) === (request.dashboard === undefined)) {
    throw new InvalidRequestError('Name one item: "dataset" or "dashboard"');
  }
  const kind = request.dataset !== undefined ? 'dataset' : 'dashboard';
  const name = kind === 'dataset' ? request.dataset : request.dashboard;
  const items: { name: string; parameters: string[] }[] =
    kind === 'dataset' ? project.datasets : project.dashboards;
  const item = items.find((candidate) => candidate.name === name);
  if (typeof name !== 'string' || !item) {
    throw new InvalidRequestError(
      `The project has no ${kind} named ${JSON.stringify(String(name).slice(0, 100))}`,
    );
  }
  const minutes = request.expiry_minutes ?? DEFAULT_EMBED_MINUTES;
  const max = options.maxMinutes;
  if (typeof minutes !== 'number' || !Number.isInteger(minutes) || minutes < 1 || minutes > max) {
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
