import { Worker } from 'node:worker_threads'

/**
 * The matching loop, run in a worker: a regular expression with catastrophic backtracking
 * (`^(a+)+$` against a long line of `a`s and one `b`) runs for ever and cannot be interrupted on
 * the thread that runs it. Plain source evaluated as a script, so it survives bundling.
 */
const MATCHER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const regex = new RegExp(workerData.pattern, workerData.flags)
parentPort.on('message', ({ text, limit }) => {
  const lines = text.split(/\\r?\\n/)
  const hits = []
  for (let i = 0; i < lines.length && hits.length < limit; i++) if (regex.test(lines[i])) hits.push(i)
  parentPort.postMessage(hits)
})
`

/** The regular expression ran longer than allowed on one file. */
export class SlowPatternError extends Error {
  override readonly name = 'SlowPatternError'
}

/**
 * Matches one regular expression against the lines of texts, off the main thread and within a
 * time limit per text, so a pathological pattern ends the search with an error instead of
 * freezing the agent (and the terminal's Ctrl-C with it). `close` when done.
 */
export class LineMatcher {
  readonly #worker: Worker
  readonly #timeoutMs: number
  #closed = false
  /** Whether the worker runs: its start (a second or more on a busy machine) is not matching time. */
  #online = false

  constructor(pattern: string, flags: string, timeoutMs: number) {
    this.#timeoutMs = timeoutMs
    this.#worker = new Worker(MATCHER_SOURCE, { eval: true, workerData: { pattern, flags } })
    this.#worker.once('online', () => {
      this.#online = true
    })
    // An exit nobody waits for must not keep the CLI alive or crash it.
    this.#worker.unref()
  }

  /** The indexes of the lines of `text` that match, at most `limit` of them. */
  match(text: string, limit: number, signal: AbortSignal): Promise<number[]> {
    signal.throwIfAborted()
    const worker = this.#worker
    return new Promise<number[]>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const done = () => {
        clearTimeout(timer)
        worker.off('online', startTimer)
        signal.removeEventListener('abort', onAbort)
        worker.off('message', onMessage)
        worker.off('error', onError)
        worker.off('exit', onExit)
      }
      const fail = (error: unknown) => {
        done()
        void this.close()
        reject(error)
      }
      const onMessage = (hits: number[]) => {
        done()
        resolve(hits)
      }
      const onError = (error: Error) =>
        fail(new Error(`search_text failed: ${error.message}`, { cause: error }))
      const onExit = () => fail(new Error('search_text failed: its matcher stopped'))
      const onAbort = () => fail(signal.reason)
      const startTimer = () => {
        timer = setTimeout(
          () =>
            fail(
              new SlowPatternError(
                `the regular expression took over ${this.#timeoutMs} ms on one file and was stopped: ` +
                  'simplify it (nested repetition such as (a+)+ can take exponential time)',
              ),
            ),
          this.#timeoutMs,
        )
      }
      // The time limit counts matching only, from when the worker runs.
      if (this.#online) startTimer()
      else worker.once('online', startTimer)
      worker.on('message', onMessage)
      worker.once('error', onError)
      worker.once('exit', onExit)
      signal.addEventListener('abort', onAbort, { once: true })
      worker.postMessage({ text, limit })
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#worker.terminate()
  }
}
