/**
 * How many registrations (RFC 7591) each address made in the last hour: a sliding count kept per process,
 * for at most `maxAddresses` addresses (the oldest forgotten first). Pure.
 */
export class RegistrationRate {
  private readonly times = new Map<string, number[]>();

  constructor(
    private readonly perHour: number,
    private readonly maxAddresses = 10_000,
  ) {}

  /** Seconds to wait before `address` may register again, or 0 (and the registration is counted). */
  take(address: string, now = Date.now()): number {
    const since = now - 3_600_000;
    const recent = (this.times.get(address) ?? []).filter((time) => time > since);
    if (recent.length >= this.perHour) {
      this.times.set(address, recent);
      return Math.max(1, Math.ceil((recent[0] + 3_600_000 - now) / 1000));
    }
    recent.push(now);
    this.times.delete(address);
    if (this.times.size >= this.maxAddresses) {
      this.times.delete(this.times.keys().next().value as string);
    }
    this.times.set(address, recent);
    return 0;
  }
}
