// Runs one measuring script in a fresh node process and reads back its report.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseReport } from './protocol.mjs'

const TIMEOUT_MS = 120_000

/**
 * Runs `script` (a file beside this one) with `args` in a fresh process. Resolves to its report:
 * figures, or `{ unavailable }`, or `{ error }` (also for a crash, a timeout or no report).
 */
export function measure(script, args) {
  const path = fileURLToPath(new URL(script, import.meta.url))
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path, ...args],
      { timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const report = parseReport(stdout)
        if (report) resolve(report)
        else if (error?.killed) resolve({ error: `no result within ${TIMEOUT_MS / 1000} s` })
        else resolve({ error: `exited without a result (${error?.code ?? 0}): ${stderr.trim().slice(-500)}` })
      },
    )
  })
}
