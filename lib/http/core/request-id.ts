import { randomBytes } from 'node:crypto';

const VALID = /^[A-Za-z0-9._-]{1,64}$/;

/** A proxy's id when it is at most 64 bytes of letters, digits, `.`, `_`, `-`; otherwise a new one. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  if (typeof incoming === 'string' && VALID.test(incoming)) return incoming;
  return newRequestId();
}

// 16 random bytes as base64url: 22 characters that always pass VALID, so the id can be forwarded.
// Drawn in batches: one randomBytes call per 256 ids keeps the syscall off the per-request path.
let pool = Buffer.alloc(0);
let at = 0;
export function newRequestId(): string {
  if (at + 16 > pool.length) {
    pool = randomBytes(16 * 256);
    at = 0;
  }
  const id = pool.toString('base64url', at, at + 16);
  at += 16;
  return id;
}
