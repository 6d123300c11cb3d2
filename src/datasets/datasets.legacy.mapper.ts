import type { ReplyWants } from '@/datasets/datasets.service';
import { negotiateFormat } from '@/datasets/results/stream-formats';

/**
 * The legacy layout's results: every row as records with the schema's `dimensions`, x_* built-ins not
 * read (the 0.4 service had none), exports as in the current layout.
 */
export function legacyResultWants(accept: string | undefined, ifNoneMatch?: string): ReplyWants {
  return { format: negotiateFormat(accept), shape: 'whole', ifNoneMatch };
}
