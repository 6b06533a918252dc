/** A progress notification's fields, as `describeProgress` reads them. */
export interface Progress {
  progress: number
  total?: number | undefined
  message?: string | undefined
}

/**
 * Hands a connection's `notifications/progress` to the call each names, by the progress token the
 * call was sent with. The SDK's own relay (`onprogress`) forgets a call's token as soon as its
 * answer is read, while notifications are handled a microtask later: one that came in the same
 * read as the answer (a server's last step, written with its result) was dropped. Here a call's
 * token is released when the call's own code resumes, after every notification read before its
 * answer has been handled.
 */
export class ProgressRelay {
  #next = 0
  readonly #listeners = new Map<string, (progress: Progress) => void>()

  /** A token for one call's progress (a string, so no id the SDK numbers collides with it). */
  register(listener: (progress: Progress) => void): string {
    const token = `kode-progress-${++this.#next}`
    this.#listeners.set(token, listener)
    return token
  }

  release(token: string): void {
    this.#listeners.delete(token)
  }

  /** A notification for a token no call holds (a late or a stranger's) is dropped. */
  dispatch(params: { progressToken: string | number } & Progress): void {
    const listener = this.#listeners.get(String(params.progressToken))
    if (listener) listener(params)
  }
}
