// How a measuring process hands its figures to the runner: one line on stdout with this prefix,
// so whatever a library prints cannot be mistaken for a result.

const PREFIX = 'BENCH_RESULT '

/** Writes `result` for the runner, then exits (libraries may hold keep-alive sockets open). */
export function reportAndExit(result) {
  process.stdout.write(`\n${PREFIX}${JSON.stringify(result)}\n`, () => process.exit(0))
}

/** The result a measuring process printed, or undefined if it printed none. */
export function parseReport(stdout) {
  const line = stdout.split('\n').find((l) => l.startsWith(PREFIX))
  return line ? JSON.parse(line.slice(PREFIX.length)) : undefined
}
