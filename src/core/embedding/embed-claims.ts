import type { EmbedGrant, EmbedValue } from '@/core/caller';
import type { Project } from '@/core/project/project';

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
