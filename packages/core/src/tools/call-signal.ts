/**
 * A tool call's own abort signal, made when something first asks for it. It aborts when the
 * task's signal does while the call runs (with the task's reason) or when the call times out
 * (`abort`); a signal first asked for after the call ended shows what happened while it ran.
 * Most calls never look at their signal: for them no `AbortController` is made and no listener is
 * added to the task's signal, which was a measurable share of a cheap call.
 */
export class CallSignal {
  readonly #task: AbortSignal
  #controller: AbortController | undefined
  /** Why the call was aborted, while no controller exists yet. */
  #abortedWith: { reason: unknown } | undefined
  #ended = false
  /** Why the call itself was aborted (its time limit), when that came before any abort of the task's. */
  #timeout: { reason: unknown } | undefined
  readonly #forward = () => this.#controller?.abort(this.#task.reason)

  constructor(task: AbortSignal) {
    this.#task = task
  }

  /** The call's signal (made now if needed). */
  get signal(): AbortSignal {
    let controller = this.#controller
    if (controller) return controller.signal
    controller = new AbortController()
    this.#controller = controller
    this.#noteTaskAbort()
    if (this.#abortedWith) controller.abort(this.#abortedWith.reason)
    else if (!this.#ended) this.#task.addEventListener('abort', this.#forward, { once: true })
    return controller.signal
  }

  /** Whether the call has ended: its tool returned (or threw), or it timed out. */
  get ended(): boolean {
    return this.#ended
  }

  /**
   * Why the call timed out (the reason it was aborted with); `undefined` unless its own abort (the
   * timeout) came before any abort of the task's.
   */
  get timeout(): unknown {
    return this.#timeout?.reason
  }

  /** Aborts the call (a timeout), unless it was aborted already. */
  abort(reason: unknown): void {
    const controller = this.#controller
    if (controller) {
      if (!controller.signal.aborted) this.#timeout = { reason }
      controller.abort(reason)
      return
    }
    this.#noteTaskAbort()
    if (this.#abortedWith) return
    this.#abortedWith = { reason }
    this.#timeout = { reason }
  }

  /** The call ended: the task's later aborts are no longer the call's. */
  end(): void {
    if (this.#ended) return
    this.#noteTaskAbort()
    this.#ended = true
    if (this.#controller) this.#task.removeEventListener('abort', this.#forward)
  }

  /** Without a controller, an abort of the task while the call runs is remembered here. */
  #noteTaskAbort(): void {
    if (!this.#ended && this.#task.aborted) this.#abortedWith ??= { reason: this.#task.reason }
  }
}
