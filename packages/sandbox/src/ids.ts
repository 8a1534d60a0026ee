/**
 * Identifiers and secrets issued by the sandbox: random, URL-safe, and unguessable, so a test that
 * probes another account's object by id really exercises the 404 rule instead of a counter collision.
 */
import { randomBytes } from 'node:crypto';

/** A random id with a type prefix, e.g. `cmp_3kq8v0c1x9ab`. */
export function newId(prefix: 'cmp' | 'site' | 'plc' | 'acct' | 'rfd'): string {
  return `${prefix}_${randomBytes(9).toString('base64url').toLowerCase().replace(/[-_]/g, '0')}`;
}

/** A click token: 32 URL-safe characters `[A-Za-z0-9_-]` (WIRE.md allows 24–48). */
export function newClickToken(): string {
  return randomBytes(24).toString('base64url');
}

/** An API key. Secret: never logged and never part of an error detail. */
export function newApiKey(): string {
  return `pbsk_${randomBytes(24).toString('base64url')}`;
}

/** A domain-verification token to publish by DNS TXT, file or meta tag. */
export function newVerificationToken(): string {
  return `postback-verify-${randomBytes(12).toString('hex')}`;
}

/** ISO-8601 UTC string of an epoch-ms time. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
