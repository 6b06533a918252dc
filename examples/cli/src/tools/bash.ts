import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { runCommand } from './run-command.js'
import type { Workspace } from './workspace.js'

const DEFAULT_TIMEOUT_S = 120
const MAX_TIMEOUT_S = 600
/** Output kept of a command: its first 10,000 and last 20,000 bytes. */
export const MAX_OUTPUT_BYTES = 30_000

const Parameters = Type.Object({
  command: Type.String({ minLength: 1, description: 'A bash command line' }),
  timeoutSeconds: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_TIMEOUT_S,
      description: `Stop the command after this many seconds. Default ${DEFAULT_TIMEOUT_S}`,
    }),
  ),
})

/** What `bash` runs with. */
export interface BashOptions {
  /** The commands' environment (the CLI passes its own without the API key variables). */
  env: NodeJS.ProcessEnv
  /** Grace between SIGTERM and SIGKILL when a command is stopped. */
  killGraceMs?: number
}

/**
 * `bash`: runs a command line with `bash -c` in the working directory, without stdin, in a
 * process group of its own. A timeout or an interrupt stops the whole group. The output (stdout
 * and stderr interleaved) is capped, head and tail kept; a non-zero exit is an `error` result
 * that still carries the output. It asks for the user's approval first.
 */
export function bashTool(workspace: Workspace, options: BashOptions): Tool<typeof Parameters> {
  return defineTool({
    name: 'bash',
    description:
      'Runs a bash command in the working directory and returns its output (stdout and stderr) and exit code. ' +
      'There is no stdin: use non-interactive flags. Long output is cut in the middle. Needs the user’s approval.',
    parameters: Parameters,
    needsApproval: true,
    // The command has its own timeout, and the result then still carries its output.
    timeoutMs: Number.POSITIVE_INFINITY,
    async execute({ command, timeoutSeconds = DEFAULT_TIMEOUT_S }, ctx) {
      const result = await runCommand(command, {
        cwd: workspace.root,
        env: options.env,
        timeoutMs: timeoutSeconds * 1000,
        signal: ctx.signal,
        maxOutputBytes: MAX_OUTPUT_BYTES,
        ...(options.killGraceMs === undefined ? {} : { killGraceMs: options.killGraceMs }),
      })
      const output = result.output === '' ? '(no output)' : result.output.replace(/\n$/, '')
      if (result.timedOut) {
        return { outputText: `${output}\n[timed out after ${timeoutSeconds}s: stopped]`, status: 'error' }
      }
      if (result.aborted) return { outputText: `${output}\n[interrupted: stopped]`, status: 'error' }
      if (result.exitCode === 0) return output
      const ended =
        result.exitCode === undefined ? `killed by ${result.signal}` : `exit code ${result.exitCode}`
      return { outputText: `${output}\n[${ended}]`, status: 'error' }
    },
  })
}
