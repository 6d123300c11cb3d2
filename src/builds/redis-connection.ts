import type { ConnectionOptions } from 'bullmq';

/** BullMQ connection options for a `redis://` or `rediss://` URL. */
export function redisConnection(url: string): ConnectionOptions {
  // Workers block on Redis; retrying a command until Redis is back is what keeps them alive across outages.
  return { url, maxRetriesPerRequest: null, enableOfflineQueue: true };
}
