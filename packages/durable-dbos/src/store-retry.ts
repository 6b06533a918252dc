import { DurableTaskError } from './errors.js'

/** How a task carries on after the store failed under its run (see `createDurableAgents`). */
export interface StoreRetryOptions {
  /** Runs in all for one execution of the task, the first included. Default 6; 1 never retries. */
  maxAttempts?: number | undefined
  /** The wait before the first retry; doubles each retry, with jitter. Default 1,000 ms. */
  baseDelayMs?: number | undefined
  /** Upper bound of one wait. Default 30,000 ms. */
  maxDelayMs?: number | undefined
}

export type StoreRetryPolicy = Required<StoreRetryOptions>

/** Waits `ms`, or until `signal` aborts (then throws its reason). */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** The host's options over the defaults, checked. */
export function resolveStoreRetry(options: StoreRetryOptions | undefined): StoreRetryPolicy {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new DurableTaskError('invalid_options', 'storeRetry must be an object')
  }
  const policy = {
    maxAttempts: options?.maxAttempts ?? 6,
    baseDelayMs: options?.baseDelayMs ?? 1_000,
    maxDelayMs: options?.maxDelayMs ?? 30_000,
  }
  if (!(Number.isInteger(policy.maxAttempts) && policy.maxAttempts >= 1)) {
    throw new DurableTaskError('invalid_options', 'storeRetry.maxAttempts must be a whole number, 1 or more')
  }
  for (const option of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!(Number.isFinite(policy[option]) && policy[option] >= 0)) {
      throw new DurableTaskError(
        'invalid_options',
        `storeRetry.${option} must be a number of milliseconds, 0 or more`,
      )
    }
  }
  return policy
}

/** The wait before retry number `retry` (1 for the first): doubling backoff, half of it random. */
export function storeRetryDelayMs(retry: number, policy: StoreRetryPolicy, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return Math.round(ceiling / 2 + (random() * ceiling) / 2)
}
