import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

/** A host process started by a test, and what it printed. */
export interface Child {
  process: ChildProcess
  lines: string[]
  /** Resolves with the first line (seen or coming) that matches. */
  line(match: (line: string) => boolean): Promise<string>
  /** Writes one line to its stdin. */
  send(line: string): void
  exited: Promise<number | null>
}

/**
 * Starts `node <script> ...args`, keeps what it prints line by line, and records it in `running`
 * so the test's cleanup can kill it.
 */
export function startChild(script: string, running: ChildProcess[], ...args: string[]): Child {
  const proc = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  running.push(proc)
  const lines: string[] = []
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = []
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line)
    for (const waiter of waiters.filter((w) => w.match(line))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  })
  // 'close', not 'exit': only then has everything the child printed been read.
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)))
  return {
    process: proc,
    lines,
    exited,
    send: (line) => proc.stdin!.write(`${line}\n`),
    line: (match) =>
      new Promise((resolve, reject) => {
        const seen = lines.find(match)
        if (seen !== undefined) return resolve(seen)
        waiters.push({ match, resolve })
        void exited.then(() =>
          reject(
            new Error(
              `child exited (${proc.exitCode ?? proc.signalCode}) without the line; its last lines: ${lines.slice(-5).join(' | ')}`,
            ),
          ),
        )
      }),
  }
}
