import type { ReplyWants } from '@/datasets/dataset-replies';
import type { ResultFormat } from '@/datasets/results/stream-formats';

/** The current layout's results: JSON pages shaped by x_orientation, x_select, x_limit and x_offset. */
export function resultWants(
  format: ResultFormat | undefined,
  ifNoneMatch?: string,
  address?: string,
): ReplyWants {
  return { format, shape: 'paged', ifNoneMatch, address };
}
