import type { Response } from 'express';
import type { Page } from '@/sign-in/sign-in-pages';

/** A sign-in step's answer: its page with its own policy, never cached; nothing when it redirected. */
export function sendPage(
  response: Response,
  step: { page: Page; status: number; retryAfterSeconds?: number } | null,
): void {
  if (step === null) return;
  if (step.retryAfterSeconds !== undefined)
    response.setHeader('Retry-After', String(step.retryAfterSeconds));
  response
    .status(step.status)
    .setHeader('Content-Security-Policy', step.page.policy)
    .setHeader('Cache-Control', 'no-store')
    .type('html')
    .send(step.page.html);
}
