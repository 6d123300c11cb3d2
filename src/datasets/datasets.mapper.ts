import type { ReplyWants } from '@/datasets/datasets.service';
import { negotiateFormat } from '@/datasets/results/stream-formats';

/** The current layout's results: JSON pages shaped by x_orientation, x_select, x_limit and x_offset. */
export function resultWants(accept: string | undefined, ifNoneMatch?: string): ReplyWants {
  return { format: negotiateFormat(accept), shape: 'paged', ifNoneMatch };
}
