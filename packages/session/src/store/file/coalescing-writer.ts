/**
 * Runs a "write the latest state" task so that requests made while a write is in flight are
 * served by one more write, not one each: appends stay cheap however often they come, and the
 * file on disk trails memory by at most the write in flight.
 */
export class CoalescingWriter {
  private dirty = false
  private running: Promise<void> | undefined
  private lastError: unknown

  constructor(
    /** Writes the current state; called again if a request came in meanwhile. */
    private readonly write: () => Promise<void>,
    /** Told when a background write fails; the state stays dirty and is retried. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Asks for a write soon; does not wait for it. */
  request(): void {
    this.dirty = true
    void this.ensureRunning()
  }

  /** Writes the current state (joining a write in flight) and throws if that write fails. */
  async flush(): Promise<void> {
    this.dirty = true
    await this.ensureRunning()
    if (this.lastError !== undefined) throw this.lastError
  }

  /** Waits for a write in flight, if any; never throws. */
  async settle(): Promise<void> {
    await this.running
  }

  private ensureRunning(): Promise<void> {
    this.running ??= this.loop()
    return this.running
  }

  private async loop(): Promise<void> {
    // Yield once so `running` is assigned before the loop can finish; it is then cleared in the
    // same synchronous step as the last `dirty` check, so no request can join a finished run.
    await undefined
    this.lastError = undefined
    try {
      while (this.dirty) {
        this.dirty = false
        try {
          await this.write()
        } catch (error) {
          this.dirty = true
          this.lastError = error
          this.onError(error)
          return
        }
      }
    } finally {
      this.running = undefined
    }
  }
}
