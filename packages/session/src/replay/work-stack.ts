/** A piece of work; true: run it again once the work it scheduled is done. */
export type Task = () => boolean

/**
 * Work done in a loop rather than by recursion, so sub-agent sessions nest to any depth without
 * growing the call stack: a task schedules what must run before it goes on (a sub-agent's
 * replay) and returns true, and the loop runs that first, then the task again. Last in, first
 * out: what a task schedules runs before everything scheduled earlier.
 */
export class WorkStack {
  readonly #tasks: Task[] = []
  #running = false

  /** Tasks scheduled and not run yet. */
  get size(): number {
    return this.#tasks.length
  }

  /** Schedules `task` to run before every task scheduled earlier. */
  push(task: Task): void {
    this.#tasks.push(task)
  }

  /** Runs every scheduled task; inside a task, nothing (the loop running it gets to them). */
  run(): void {
    if (this.#running) return
    this.#running = true
    const tasks = this.#tasks
    try {
      while (tasks.length > 0) {
        const task = tasks.pop()!
        const mark = tasks.length
        // Again after what it scheduled (which sits above `mark`).
        if (task()) tasks.splice(mark, 0, task)
      }
    } catch (error) {
      tasks.length = 0
      throw error
    } finally {
      this.#running = false
    }
  }
}
