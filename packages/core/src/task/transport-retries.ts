import type { RetryInfo } from '@kode/providers'

/**
 * The retries the transport announces through its synchronous `onRetry`, handled one after the
 * other, in order, by an async `handle` (which writes a record, then emits). The model call awaits
 * {@link settled} before it handles anything the stream gave after them and before it returns, so
 * each is handled exactly once, before what followed it, however the call ends. Once handling one
 * fails (the store refused the record), the rest are dropped and `settled` throws that failure.
 */
export class TransportRetries {
  readonly #handle: (info: RetryInfo) => Promise<void>
  #done: Promise<void> = Promise.resolve()
  #queued = 0
  #failure: { error: unknown } | undefined

  constructor(handle: (info: RetryInfo) => Promise<void>) {
    this.#handle = handle
  }

  /** `StreamOptions.onRetry`: queues the retry behind the ones before it. */
  readonly onRetry = (info: RetryInfo): void => {
    this.#queued++
    this.#done = this.#done
      .then(() => (this.#failure ? undefined : this.#handle(info)))
      // Kept, not left rejected: nothing may await the chain before the next item comes.
      .catch((error: unknown) => {
        this.#failure ??= { error }
      })
      .finally(() => {
        this.#queued--
      })
  }

  /** A retry is announced but not handled yet. */
  get pending(): boolean {
    return this.#queued > 0
  }

  /** Resolves once every retry announced so far is handled; throws the failure to handle one. */
  async settled(): Promise<void> {
    await this.#done
    if (this.#failure) throw this.#failure.error
  }
}
