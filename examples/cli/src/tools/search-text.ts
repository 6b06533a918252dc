import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { defineTool, type Tool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { type OpenDirectory, openDirectory, openSubdirectory } from './confined-open.js'
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
 * matches and 5,000 files. Symlinks are not followed and directories are walked through their
 * opened handles, so the search stays in the workspace even while its directories change. The
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
        for await (const file of walk(workspace, start, ctx.signal)) {
          if (++files > MAX_FILES || matches.length >= maxResults) {
            truncated = true
            break
          }
          const text = await readSearchable(workspace, file)
          if (text === undefined) continue
          const hits = await matcher.match(text, maxResults - matches.length, ctx.signal)
          if (hits.length === 0) continue
          const lines = text.split(/\r?\n/)
          for (const i of hits)
            matches.push(`${workspace.display(file.path)}:${i + 1}: ${clip(lines[i]!.trim())}`)
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

/** A file the walk found: its path, and the name that opens it through its directory's handle. */
interface Found {
  path: string
  via?: string
}

/**
 * Files under `start` (or `start` itself), depth first, names sorted so results are stable. Each
 * directory is opened (and checked) through the handle of the one above it and listed through its
 * own, so a directory swapped for a symlink during the walk is a `changed` error, not a way out.
 */
async function* walk(workspace: Workspace, start: string, signal: AbortSignal): AsyncGenerator<Found> {
  const dir = await openDirectory(workspace, start).catch((error: NodeJS.ErrnoException) => {
    // Not a directory (and not a symlink: that is `changed`): a file, searched alone.
    if (error.code === 'ENOTDIR') return undefined
    throw error
  })
  if (dir === undefined) yield { path: start }
  else yield* walkOpened(workspace, dir, signal)
}

/** The files under the opened `dir`; closes it when done (or when the search stops early). */
async function* walkOpened(
  workspace: Workspace,
  dir: OpenDirectory,
  signal: AbortSignal,
): AsyncGenerator<Found> {
  try {
    const entries = await readdir(dir.self, { withFileTypes: true })
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      signal.throwIfAborted()
      if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name))
        yield* walkOpened(workspace, await openSubdirectory(workspace, dir, entry.name), signal)
      else if (entry.isFile()) yield { path: join(dir.path, entry.name), via: dir.entry(entry.name) }
    }
  } finally {
    await dir.close()
  }
}

async function readSearchable(workspace: Workspace, file: Found): Promise<string | undefined> {
  const { handle, stat } = await openRegularFile(workspace, file.path, { via: file.via })
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
