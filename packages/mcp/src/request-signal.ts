/** A request's own abort signal, and how to detach it from its source once the request settled. */
export interface RequestSignal {
  readonly signal: AbortSignal
  /** Stops following the source: its later abort is not this request's. */
  release(): void
}

/**
 * A signal that aborts (with the same reason) when `source` does, until `release()`. The SDK adds
 * an abort listener to a request's signal and never removes it: handed a signal that outlives the
 * request (a host's, shared by many calls; `connectMcpServer`'s), the signal would gather a listener
 * per request, and its abort would send `notifications/cancelled` for requests answered long ago,
 * `initialize` among them, which the protocol forbids cancelling.
 */
export function requestSignal(source: AbortSignal): RequestSignal {
  const controller = new AbortController()
  if (source.aborted) {
    controller.abort(source.reason)
    return { signal: controller.signal, release: () => undefined }
  }
  const forward = () => controller.abort(source.reason)
  source.addEventListener('abort', forward, { once: true })
  return { signal: controller.signal, release: () => source.removeEventListener('abort', forward) }
}
