import type { HistoryEvent } from '@kode/protocol'

/**
 * A task of this server in one session, and what tells which session it runs in: the records it
 * started from and those it appended. A session can be deleted under a running task only once
 * the task's lease has expired (the store refuses to delete a session under a live lease): the
 * task's appends are refused from then on, so it is stopped (`stopForDeletion`).
 */
export class RunningTask {
  readonly abort = new AbortController()
  /** Settles once the task has ended (its events sent, its failure logged). */
  done: Promise<void> = Promise.resolve()
  /** The records of the session the task holds: known from its first event (its lease taken) on. */
  #started: readonly HistoryEvent[] | undefined
  readonly #appended: HistoryEvent[] = []
  /** What the feed held of each session that went while the task was starting. */
  readonly goneWhileStarting: (readonly HistoryEvent[])[] = []
  /** The task was stopped because the session it ran in was deleted: its end is expected. */
  stoppedForDeletion = false
  /** How many records the session held when the task took its writer (see `countAppends`). */
  taken: number | undefined

  /** Records the task appended (through the store it writes with). */
  appended(records: readonly HistoryEvent[]): void {
    this.#appended.push(...records)
  }

  /** The task holds the session now; `history` is what it started from. */
  started(history: readonly HistoryEvent[]): void {
    this.#started = history
  }

  /**
   * Whether the task runs in the session whose records were `gone` (what a feed held of a deleted
   * session): whether the two agree at the last position both know. `undefined` while the task
   * starts (which session it takes is not known yet). A task with no record yet, or one that
   * started from another history (the session created again), runs in what the id holds now.
   */
  runsIn(gone: readonly HistoryEvent[]): boolean | undefined {
    if (this.#started === undefined) return undefined
    const own = [...this.#started, ...this.#appended]
    const at = Math.min(own.length, gone.length) - 1
    return at >= 0 && JSON.stringify(own[at]) === JSON.stringify(gone[at])
  }

  /** Stops the task: the session it runs in was deleted, so nothing it does can be kept. */
  stopForDeletion(): void {
    this.stoppedForDeletion = true
    this.abort.abort()
  }
}
