import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { LineMatcher } from './line-matcher.js'
import { openRegularFile } from './regular-file.js'
import type { Workspace } from './workspace.js'

/** Directories never searched: dependencies, build output, version control, Kode's own state. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage', '.kode'])
const MAX_FILES = 5000
const MAX_FILE_BYTES = 1024 * 1024
const MAX_LINE_CHARS = 200
const DEFAULT_RESULTS = 50
const MAX_RESULTS = 200
/** How long the pattern may run on one file: far above any sane pattern on a 1 MiB file. */
const MATCH_TIMEOUT_MS = 5000

/** Options of the `search_text` tool. */
export interface SearchTextOptions {
  /** How long the regular expression may run on one file before the search fails. Default 5,000 ms. */
  matchTimeoutMs?: number
}

const Parameters = Type.Object({
  pattern: Type.String({ description: 'A JavaScript regular expression, matched against each line' }),
  path: Type.Optional(Type.String({ description: 'File or directory to search. Default .' })),
  ignoreCase: Type.Optional(Type.Boolean({ description: 'Match case-insensitively. Default false' })),
  maxResults: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_RESULTS, description: `Default ${DEFAULT_RESULTS}` }),
  ),
})

/**
 * `search_text`: grep-like and bounded. Matching lines as `path:line: text`, files in name order,
 * skipping dependencies and build output, binary files and files over 1 MiB; at most `maxResults`
 * matches and 5,000 files. Symlinks are not followed, so the search stays in the workspace. The
 * pattern runs in a worker thread with a time limit per file, so a catastrophically slow one fails
 * the call instead of blocking the agent.
 */
export function searchTextTool(
  workspace: Workspace,
  options: SearchTextOptions = {},
): Tool<typeof Parameters> {
  const timeoutMs = options.matchTimeoutMs ?? MATCH_TIMEOUT_MS
  return defineTool({
    name: 'search_text',
    description:
      'Searches text files of the working directory for a regular expression and returns matching ' +
      'lines as path:line: text. Skips node_modules, dist, .git and binary files.',
    parameters: Parameters,
    async execute({ pattern, path = '.', ignoreCase = false, maxResults = DEFAULT_RESULTS }, ctx) {
      const flags = ignoreCase ? 'i' : ''
      compile(pattern, flags)
      const start = await workspace.resolve(path)
      const matches: string[] = []
      let files = 0
      let truncated = false
      const matcher = new LineMatcher(pattern, flags, timeoutMs)
      try {
        for await (const file of walk(start, ctx.signal)) {
          if (++files > MAX_FILES || matches.length >= maxResults) {
            truncated = true
            break
          }
          const text = await readSearchable(workspace, file)
          if (text === undefined) continue
          const hits = await matcher.match(text, maxResults - matches.length, ctx.signal)
          if (hits.length === 0) continue
          const lines = text.split(/\r?\n/)
          for (const i of hits) matches.push(`${workspace.display(file)}:${i + 1}: ${clip(lines[i]!.trim())}`)
        }
      } finally {
        await matcher.close()
      }
      if (matches.length === 0) return `No matches for /${pattern}/ in ${workspace.display(start)}.`
      const note = truncated ? `\n[stopped after ${matches.length} matches; narrow the search]` : ''
      return `${matches.join('\n')}${note}`
    },
  })
}

/** Checks the pattern here, so an invalid one fails with its own message before any work. */
function compile(pattern: string, flags: string): RegExp {
  try {
    return new RegExp(pattern, flags)
  } catch (error) {
    throw new Error(`invalid regular expression /${pattern}/: ${(error as Error).message}`)
  }
}

/** Files under `start` (or `start` itself), depth first, names sorted so results are stable. */
async function* walk(start: string, signal: AbortSignal): AsyncGenerator<string> {
  if (!(await stat(start)).isDirectory()) {
    yield start
    return
  }
  const entries = await readdir(start, { withFileTypes: true })
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    signal.throwIfAborted()
    const path = join(start, entry.name)
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) yield* walk(path, signal)
    else if (entry.isFile()) yield path
  }
}

async function readSearchable(workspace: Workspace, file: string): Promise<string | undefined> {
  const { handle, stat } = await openRegularFile(workspace, file)
  try {
    if (stat.size > MAX_FILE_BYTES) return undefined
    const bytes = await handle.readFile()
    return bytes.includes(0) ? undefined : bytes.toString('utf8')
  } finally {
    await handle.close()
  }
}

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line
}
