/** What one key holds in the store that server processes share. */
export interface SharedState {
  /** The encoded result, when one process computed and stored it. */
  value?: string;
  /** The encoded error, for a short while after the computing process failed. */
  error?: string;
  /** Whether a process holds the right to compute it now. */
  locked: boolean;
}

/** What {@link SharedResults.claim} found: a value or error to use, or the right to compute (`owner`). */
export interface Claim extends SharedState {
  owner: boolean;
}

/** How the owner of a key ends its computation: with a value to store (if small enough) or an error. */
export interface Ending {
  value?: string;
  ttlSeconds: number;
  error?: string;
  errorMs: number;
}

/** Resolves when a key is announced ready (or after a time); `cancel` stops waiting. */
export interface ReadyWait {
  promise: Promise<void>;
  cancel(): void;
}

/**
 * The store shared by every server process (Redis): results, a lock per key so that one process computes
 * it, and a notice when it is ready so that the others stop waiting at once. Any method may reject when the
 * store is unreachable; callers then carry on without it.
 */
export interface SharedResults {
  state(key: string): Promise<SharedState>;
  /** In one step: the stored value or error if there is one, else the lock for `ms` unless taken. */
  claim(key: string, owner: string, ms: number): Promise<Claim>;
  /** Extends a lock still held by `owner`; false when it was lost (expired and taken). */
  renewLock(key: string, owner: string, ms: number): Promise<boolean>;
  /** In one step: stores the outcome, releases the lock if `owner` still holds it, tells the waiters. */
  finish(key: string, owner: string, ending: Ending): Promise<void>;
  waitReady(key: string, ms: number): ReadyWait;
  close(): Promise<void>;
}
