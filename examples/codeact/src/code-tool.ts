import {
  CODE_EXECUTION_TOOL,
  CodeExecutionParameters,
  defineTool,
  type Tool,
  type ToolOutput,
} from '@kode/core'
import { DEFAULT_INTERPRETERS, type Interpreter } from './interpreters.js'
import { runInSandbox, type SandboxResult } from './sandbox.js'

/** Options of {@link createCodeTool}. */
export interface CodeToolOptions {
  /** The interpreter of each fence language (lower case). Default: JavaScript (Node.js) and Python 3. */
  interpreters?: Readonly<Record<string, Interpreter>>
  /** The language of a block whose fence names none. Default: the first of `interpreters`. */
  defaultLanguage?: string
  /** A program's wall-clock limit. Default 10,000 ms. */
  timeoutMs?: number
  /** Bytes of output a program may write before it is stopped. Default 20,000. */
  outputLimit?: number
}

/**
 * The code tool of a CodeAct agent (`codeActFormatter()` calls it `code_execution`): each call
 * runs one program in a sandboxed subprocess (see `runInSandbox`) and returns what it printed.
 * A program that fails (non-zero exit, killed at the time or output limit) is an `error` result,
 * so the model sees the traceback and can fix its code. Programs run one at a time.
 */
export function createCodeTool(options: CodeToolOptions = {}): Tool<typeof CodeExecutionParameters> {
  const interpreters = options.interpreters ?? DEFAULT_INTERPRETERS
  const languages = Object.keys(interpreters)
  const defaultLanguage = options.defaultLanguage ?? languages[0]
  const timeoutMs = options.timeoutMs ?? 10_000
  const outputLimit = options.outputLimit ?? 20_000
  return defineTool({
    name: CODE_EXECUTION_TOOL,
    description:
      `Runs one program as a separate process in a fresh, empty temporary directory (languages: ${languages.join(', ')}). ` +
      `Nothing carries over between programs. No environment variables but PATH, HOME, TMPDIR and LANG; at most ${timeoutMs} ms; ` +
      `output past ${outputLimit} bytes stops the program.`,
    parameters: CodeExecutionParameters,
    concurrent: false,
    // The sandbox enforces the limit itself; this only backs it up.
    timeoutMs: timeoutMs + 5_000,
    async execute({ code, language }, ctx): Promise<ToolOutput> {
      const name = (language || defaultLanguage || '').toLowerCase()
      // The language comes from the model: only the table's own entries, never `constructor`.
      const interpreter = Object.hasOwn(interpreters, name) ? interpreters[name] : undefined
      if (!interpreter) {
        return {
          status: 'error',
          outputText: `No interpreter for "${name}". Languages: ${languages.join(', ')}.`,
        }
      }
      const result = await runInSandbox(interpreter, code, { timeoutMs, outputLimit, signal: ctx.signal })
      return describeRun(result, { timeoutMs, outputLimit })
    },
  })
}

/** The observation of a run: the output, then a note of how the program ended when it failed. */
function describeRun(result: SandboxResult, limits: { timeoutMs: number; outputLimit: number }): ToolOutput {
  const notes: string[] = []
  if (result.truncated) notes.push(`[output cut at ${limits.outputLimit} bytes; the program was stopped]`)
  if (result.timedOut) notes.push(`[timed out after ${limits.timeoutMs} ms; the program was stopped]`)
  if (result.exitCode !== null && result.exitCode !== 0) notes.push(`[exit code ${result.exitCode}]`)
  // A signal nothing here sent: the program's own, or the system's (an out-of-memory killer).
  const stopped = result.timedOut || result.truncated || result.aborted
  if (result.exitSignal !== null && !stopped) notes.push(`[killed by ${result.exitSignal}]`)
  const failed = result.exitCode !== 0 || result.timedOut || result.truncated
  const text = [result.output.trimEnd(), ...notes].filter((line) => line !== '').join('\n')
  return { status: failed ? 'error' : 'success', outputText: text === '' ? '(no output)' : text }
}
