import { parseArgs } from 'node:util'
import { baseUrlProblem } from './base-url.js'

/** What the command line asked for. */
export interface CliArgs {
  command: 'repl' | 'exec' | 'demo' | 'help' | 'version'
  /** `exec`'s prompt (`-`: read it from stdin). */
  prompt?: string
  api?: string
  model?: string
  baseUrl?: string
  /** Continue this session (`--resume`). */
  resume?: string
  sessionsDir?: string
  /** Use the scripted offline model whatever keys are set. */
  scripted: boolean
  /** Let `./kode.config.json` decide where keys go (`baseUrl`, `apiKeyEnv`) for this run. */
  trustProject: boolean
  /** Approve every call of the tools that ask (write_file, edit_file, bash) without asking. */
  yes: boolean
  /** `exec` output: the final answer (`text`) or one protocol event per line (`stream-json`). */
  output: 'text' | 'stream-json'
  reasoning?: 'minimal' | 'low' | 'medium' | 'high'
  thinking?: 'collapse' | 'expand'
}

/** A command line that cannot be run; the message says why. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** What `kode --help` prints. */
export const USAGE = `Usage:
  kode [options]                 interactive session (REPL)
  kode exec [options] <prompt>   run one task and print the answer (prompt - : read it from stdin)
  kode demo [options]            run the demo task (offline with a scripted model when no key is set)

Options:
  --api <api>             anthropic, openai-responses, openai-chat, google, openrouter
  --model <id>            model id (default per api)
  --base-url <url>        api root, for compatible or local servers
  --resume <id>           continue a stored session
  --sessions-dir <dir>    where sessions are stored (default .kode/sessions)
  --scripted              use the local scripted model, even when a key is set
  --output <format>       exec: text (default) or stream-json (one event per line)
  --reasoning <effort>    ask for reasoning: minimal, low, medium, high
  --thinking <mode>       collapse (default) or expand finished thinking
  -y, --yes               run write_file, edit_file and bash without asking for approval
  --trust-project         let ./kode.config.json set baseUrl and apiKeyEnv (where keys go)
  -h, --help              this help
  -v, --version           the version

Keys come from ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY.
Config: ~/.config/kode/config.json, then ./kode.config.json (see docs/cli.md).`

/** The flag each string option comes from, for messages. */
const FLAG_OF = {
  api: '--api',
  model: '--model',
  baseUrl: '--base-url',
  resume: '--resume',
  sessionsDir: '--sessions-dir',
} as const

/** Parses `argv` (without `node` and the script). */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  const args: CliArgs = {
    command: 'repl',
    scripted: values.scripted ?? false,
    trustProject: values['trust-project'] ?? false,
    yes: values.yes ?? false,
    output: oneOf('--output', values.output ?? 'text', ['text', 'stream-json'] as const),
  }
  for (const [key, value] of [
    ['api', values.api],
    ['model', values.model],
    ['baseUrl', values['base-url']],
    ['resume', values.resume],
    ['sessionsDir', values['sessions-dir']],
  ] as const) {
    if (value === undefined) continue
    // An empty value is a slip (an unset shell variable), never a choice: an empty --sessions-dir
    // would store sessions in the working directory and exports beside it, an empty --model
    // would be reported as a missing default.
    if (value.trim() === '') throw new UsageError(`${FLAG_OF[key]} needs a value (got "${value}")`)
    args[key] = value
  }
  const baseUrl = args.baseUrl === undefined ? undefined : baseUrlProblem(args.baseUrl)
  if (baseUrl !== undefined) throw new UsageError(`--base-url ${baseUrl}`)
  if (values.reasoning !== undefined)
    args.reasoning = oneOf('--reasoning', values.reasoning, ['minimal', 'low', 'medium', 'high'] as const)
  if (values.thinking !== undefined)
    args.thinking = oneOf('--thinking', values.thinking, ['collapse', 'expand'] as const)
  if (values.help) return { ...args, command: 'help' }
  if (values.version) return { ...args, command: 'version' }
  const [command, ...rest] = positionals
  // A flag the command does not take would be ignored without a word (`kode --output
  // stream-json` prints no JSON, `kode demo --resume` starts a new session): refuse it.
  if (values.output !== undefined && command !== 'exec')
    throw new UsageError('--output applies to kode exec only')
  if (command === undefined) return args
  if (command === 'exec') {
    const prompt = rest.join(' ').trim()
    if (prompt === '')
      throw new UsageError('kode exec needs a prompt: kode exec "what does src/index.ts export?"')
    return { ...args, command: 'exec', prompt }
  }
  if (command === 'demo' && rest.length === 0) {
    if (args.resume !== undefined)
      throw new UsageError('--resume applies to the REPL and kode exec, not to kode demo')
    return { ...args, command: 'demo' }
  }
  throw new UsageError(`unknown command "${positionals.join(' ')}"`)
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      api: { type: 'string' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      resume: { type: 'string' },
      'sessions-dir': { type: 'string' },
      scripted: { type: 'boolean' },
      'trust-project': { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
      output: { type: 'string' },
      reasoning: { type: 'string' },
      thinking: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  })
}

function oneOf<const T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got "${value}")`)
}
