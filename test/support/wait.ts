/** Reads until `done` holds or the time is up, and returns the last value read (the test asserts on it). */
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  ms = 20000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
