import type { ProviderError } from '@kode/providers'

/**
 * The `errorMessage` of the retryable `error` event that announces a retry: a turn's and a summary
 * request's alike, so a host shows both the same way.
 */
export function retryNotice(error: ProviderError, delayMs: number): string {
  return `${error.message} (retrying in ${delayMs} ms)`
}
