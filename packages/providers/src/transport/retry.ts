import { setLongTimeout } from './long-timeout.js'

/** How the transport retries a request that failed before any output reached the caller. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 4; 1 disables retries. */
  maxAttempts?: number | undefined
  /** Backoff before the first retry; doubles each retry, with jitter. Default 1,000 ms. */
  baseDelayMs?: number | undefined
  /** Upper bound of one backoff delay. Default 30,000 ms. */
  maxDelayMs?: number | undefined
  /** Upper bound on a delay the provider asks for with `retry-after-ms` / `Retry-After`. Default 60,000 ms. */
  maxRetryAfterMs?: number | undefined
  /** No retry starts once this much time has passed since the first attempt (delay included). Default 180,000 ms. */
  budgetMs?: number | undefined
}

export type RetryPolicy = Required<RetryOptions>

const DEFAULTS: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  budgetMs: 180_000,
}

/** The host's options over the defaults. */
export function resolveRetryPolicy(options: RetryOptions | undefined): RetryPolicy {
  return options ? { ...DEFAULTS, ...stripUndefined(options) } : DEFAULTS
}

/**
 * The wait before retry number `retry` (1 for the first retry): the provider's own request when
 * it made one (capped), else exponential backoff with equal jitter (half fixed, half random).
 */
export function retryDelayMs(
  retry: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), policy.maxRetryAfterMs)
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}

/** Whether the policy allows retry number `retry` after `elapsedMs`, waiting `delayMs` first. */
export function retryAllowed(
  retry: number,
  elapsedMs: number,
  delayMs: number,
  policy: RetryPolicy,
): boolean {
  return retry < policy.maxAttempts && elapsedMs + delayMs <= policy.budgetMs
}

/** 408, 409, 429 and every 5xx (Anthropic's 529 "overloaded" included) are worth another try. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/**
 * Codes that say a retryable status will not pass by waiting: OpenAI's 429 `insufficient_quota`
 * (the account's credits or monthly spend are used up) fails the same way on every attempt.
 */
const FINAL_CODES: ReadonlySet<string> = new Set(['insufficient_quota'])

/** Whether an HTTP failure may succeed when sent again: by its status, unless its code says otherwise. */
export function isRetryableResponse(status: number, code: string | undefined): boolean {
  return isRetryableStatus(status) && !(code !== undefined && FINAL_CODES.has(code))
}

/** Provider error codes (sent in a body or inside a stream) that mean "busy, try again". */
const RETRYABLE_CODES = new Set([
  'overloaded_error',
  'api_error',
  'rate_limit_error',
  'rate_limit_exceeded',
  'server_error',
  'internal_error',
  'service_unavailable',
  'timeout',
  'UNAVAILABLE',
  'RESOURCE_EXHAUSTED',
  'INTERNAL',
  'DEADLINE_EXCEEDED',
])

/** Whether a provider error code means a retry may succeed. */
export function isRetryableCode(code: string | undefined): boolean {
  return code !== undefined && RETRYABLE_CODES.has(code)
}

/**
 * The delay a response asks for: `retry-after-ms` (OpenAI, Anthropic) first, then `Retry-After`
 * in seconds or as an HTTP date. `undefined` when absent or unreadable.
 */
export function parseRetryAfter(headers: Headers, nowMs: number): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms !== null) {
    const value = Number.parseFloat(ms)
    if (Number.isFinite(value) && value >= 0) return value
  }
  const after = headers.get('retry-after')?.trim()
  if (!after) return undefined
  const seconds = Number(after)
  if (DELAY_SECONDS.test(after) && Number.isFinite(seconds)) return seconds * 1000
  // Date.parse reads almost anything with a number in it as a date (`abc 1` is 2001), which
  // would turn garbage into "retry now": only a value shaped like an HTTP date is read as one.
  if (!HTTP_DATE.test(after)) return undefined
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

const DELAY_SECONDS = /^\d+(?:\.\d+)?$/
// The three forms HTTP allows: `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`
// and `Sun Nov  6 08:49:37 1994`: a day's name, then a time of day.
const HTTP_DATE = /^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,? .*\b\d{1,2}:\d{2}:\d{2}\b/i

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const done = () => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }
    setLongTimeout(done, ms, (armed) => {
      timer = armed
    })
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** `work`, or a rejection with the signal's reason as soon as it aborts (the work is left to end alone). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  const out: Partial<T> = {}
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] !== undefined) out[key] = value[key]
  }
  return out
}
