import { runtimeClosure } from '@/engine/query/model-sql';
import { findModel, Project } from '@/core/project/project';

/**
 * What of the caller a statement can read: `all` when a template uses `user` other than as `user.<name>`
 * (`{% set u = user %}`, `user['role']`, a filter on it), else the names it reads (`username`, `is_admin`, or
 * a user field).
 */
export type CallerReads = 'all' | readonly string[];

/** What a dataset's result depends on besides its selections and the build, found from the SQL text. */
export interface ModelReads {
  caller: CallerReads;
  /**
   * Why the result may not be kept and reused, when it may not: it comes from a live external database, or
   * its SQL calls a function whose value changes from one run to the next.
   */
  uncacheable?: string;
}

const TAG = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}/g;
const COMMENT = /\{#[\s\S]*?#\}/g;
// `user` as a name of its own: not `users`, `user_id`, `x.user` or `"user"`.
const USER = /(?<![\w.'"])user(?![\w'"])/g;
const MEMBER = /^\s*\.\s*([A-Za-z_]\w*)/;

/**
 * The `user.*` names a template reads, found in its tags only: the template context offers no other way to
 * reach the user (no loader, no includes), so what the text does not name, no branch can read.
 */
export function callerReadsOf(sql: string): CallerReads {
  const names = new Set<string>();
  const text = sql.replace(COMMENT, '');
  for (const tag of text.matchAll(TAG)) {
    const body = tag[1] ?? tag[2];
    for (const use of body.matchAll(USER)) {
      const member = MEMBER.exec(body.slice((use.index ?? 0) + use[0].length));
      if (!member) return 'all';
      names.add(member[1]);
    }
  }
  return [...names].sort();
}

// Functions whose value changes between runs over the same data; a result using one is never reused.
const VOLATILE =
  /\b(now|random|uuid|gen_random_uuid|uuidv4|uuidv7|today|get_current_time|get_current_timestamp|transaction_timestamp|nextval|currval|setseed)\s*\(|\b(current_date|current_time|current_timestamp|localtime|localtimestamp)\b/i;

function mergeReads(a: CallerReads, b: CallerReads): CallerReads {
  if (a === 'all' || b === 'all') return 'all';
  return [...new Set([...a, ...b])].sort();
}

/**
 * What a model's result depends on: the caller parts read by its template and by every runtime model it
 * reads (they render with the same caller), and whether it may be cached at all.
 */
export function modelReads(project: Project, name: string): ModelReads {
  const model = findModel(project, name);
  if (!model) throw new Error(`no model named "${name}"`);
  switch (model.kind) {
    case 'seed':
    case 'source':
    case 'build':
      return { caller: [] };
    case 'dbview':
      return {
        caller: callerReadsOf(model.sql),
        uncacheable: `it reads the live database of connection "${model.connection}"`,
      };
    case 'runtime': {
      let caller: CallerReads = [];
      let uncacheable: string | undefined;
      for (const read of runtimeClosure(project, [name])) {
        caller = mergeReads(caller, callerReadsOf(read.sql));
        const volatile = VOLATILE.exec(read.sql.replace(COMMENT, ''));
        if (volatile && !uncacheable) {
          uncacheable = `runtime model "${read.name}" calls ${(volatile[1] ?? volatile[2]).toLowerCase()}`;
        }
      }
      return uncacheable ? { caller, uncacheable } : { caller };
    }
  }
}
