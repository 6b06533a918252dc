import type { PendingApproval } from '@kode/core'
import { type MarkEscape, revealHidden, revealPath } from '../display/reveal.js'

const PREVIEW_LINES = 12
const MAX_LINE_CHARS = 160

/**
 * What the approval prompt shows of a call, one string a line: the whole command of `bash`, the
 * path and the first lines of `write_file`, the path and the replaced lines of `edit_file`, the
 * whole arguments of any other tool. The model wrote these: newlines in a path, characters that
 * would drive the terminal or reorder the text, characters the terminal shows as nothing or as
 * spaces, tabs, and spaces at either end of a path are shown as escapes (`\n`, `\x1b`, `\u202e`,
 * `\u200b`, `\t`, `\x20`), marked with `mark`, or without it with the model's own backslashes
 * doubled (see {@link revealHidden}), so the user sees exactly what would run. A tab is `\t` in a
 * file's lines too, with nothing added: indentation reads as a run of `\t`, one a level, and
 * padding to a tab stop would make a tab and a tab followed by spaces look alike.
 * The lines are safe to write to the terminal as they are.
 */
export function describeCall(call: PendingApproval, mark?: MarkEscape): string[] {
  const args = parseObject(call.arguments)
  const text = (key: string) => (typeof args?.[key] === 'string' ? (args[key] as string) : undefined)
  // A newline in a path is shown as `\n` (`revealPath`): the path stays on its line and cannot
  // pass for preview lines.
  const reveal = (lines: string[]) => lines.map((line) => revealHidden(line, mark))
  switch (call.toolName) {
    case 'bash': {
      const command = text('command')
      if (command === undefined) break
      const timeout = typeof args?.timeoutSeconds === 'number' ? ` (timeout ${args.timeoutSeconds}s)` : ''
      return reveal([`bash${timeout}:`, ...whole(command, '  $ ')])
    }
    case 'write_file': {
      const path = text('path')
      const content = text('content')
      if (path === undefined || content === undefined) break
      const count = content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0)
      return [`write_file ${revealPath(path, mark)} (${count} lines):`, ...reveal(preview(content, '  │ '))]
    }
    case 'edit_file': {
      const path = text('path')
      const oldText = text('oldText')
      const newText = text('newText')
      if (path === undefined || oldText === undefined || newText === undefined) break
      const all = args?.replaceAll === true ? ' (every occurrence)' : ''
      return [
        `edit_file ${revealPath(path, mark)}${all}:`,
        ...reveal([...preview(oldText, '  - '), ...preview(newText, '  + ')]),
      ]
    }
  }
  return reveal([`${call.toolName}:`, ...whole(call.arguments, '  ')])
}

/** Every line of `text`, uncut: what runs must be seen whole. */
function whole(text: string, prefix: string): string[] {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${prefix}${line}`)
}

function preview(text: string, prefix: string): string[] {
  const lines = text.replace(/\n$/, '').split('\n')
  const shown = lines.slice(0, PREVIEW_LINES).map((line) => {
    const chars = [...line]
    const cut = chars.length > MAX_LINE_CHARS ? `${chars.slice(0, MAX_LINE_CHARS - 1).join('')}…` : line
    return `${prefix}${cut}`
  })
  if (lines.length > PREVIEW_LINES) shown.push(`${prefix}… ${lines.length - PREVIEW_LINES} more lines`)
  return shown
}

function parseObject(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}
