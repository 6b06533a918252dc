import type { CodeBlock } from './code-blocks.js'

/** The line labels of the text formats (ReAct's `Thought:` / `Action:` / `Args:`, `Final Answer:`); `Action Input:` reads as `args`. */
export type Label = 'thought' | 'action' | 'args' | 'final answer' | 'observation'

/** A labelled line: where the line starts and where the text after `Label:` starts. */
export interface LabelLine {
  label: Label
  /** Offset of the line's first character. */
  start: number
  /** Offset of the value, after the colon and the spaces that follow it. */
  valueStart: number
  /**
   * The emphasis marker opened before the label and not closed before the value
   * (`**Final Answer: 42**`): it closes at the end of the value's first line.
   */
  openEmphasis?: string
}

// A label starts a line (after optional spaces), case-insensitively, optionally in bold or italics
// as models often write it (`**Action:**`, `**Action**:`); `Action Input:` is LangChain's `Args:`.
const LABEL_LINE =
  /^[ \t]*(\*{1,3}|_{1,3})?(action input|thought|action|args|final answer|observation)\1?[ \t]*:\1?[ \t]*/gim

/** Every labelled line of `text`, in order. */
export function scanLabels(text: string): LabelLine[] {
  const lines: LabelLine[] = []
  for (const match of text.matchAll(LABEL_LINE)) {
    const name = match[2]!.toLowerCase()
    const line: LabelLine = {
      label: name === 'action input' ? 'args' : (name as Label),
      start: match.index,
      valueStart: match.index + match[0].length,
    }
    const marker = match[1]
    // Closed after the name or after the colon (`**Action:**`, `**Action**:`), or still open.
    if (marker !== undefined && !match[0].slice(match[0].indexOf(marker) + marker.length).includes(marker))
      line.openEmphasis = marker
    lines.push(line)
  }
  return lines
}

/**
 * The labels of `lines` that are not inside one of `blocks` (a label inside a code block is
 * something the model shows, an example or a quote, not a step it takes). Both lists are in text
 * order, as `scanLabels` and `parseCodeBlocks` give them; the cost is linear in both.
 */
export function labelsOutside(lines: readonly LabelLine[], blocks: readonly CodeBlock[]): LabelLine[] {
  // Blocks do not overlap, so one pass over both lists does: checking each label against every
  // block made a long response of many small blocks cost labels x blocks.
  const outside: LabelLine[] = []
  let index = 0
  for (const line of lines) {
    while (index < blocks.length && blocks[index]!.end <= line.start) index++
    const block = blocks[index]
    if (!(block && line.start > block.start)) outside.push(line)
  }
  return outside
}

/**
 * Where the model's own part of a response ends: at the first `Observation:` line, since anything
 * after it is the model imagining a tool's result (the real one comes from the tool).
 */
export function ownTextEnd(text: string, labels: readonly LabelLine[]): number {
  return labels.find((line) => line.label === 'observation')?.start ?? text.length
}

/**
 * The text after a `Final Answer:` label, up to `end`, trimmed; without the emphasis marker that
 * closes at the end of its first line when the label opened it (`**Final Answer: 42**` is `42`).
 */
export function answerAfter(text: string, line: LabelLine, end: number): string {
  const answer = text.slice(line.valueStart, end).trim()
  const marker = line.openEmphasis
  if (marker === undefined) return answer
  const newline = answer.indexOf('\n')
  const first = (newline === -1 ? answer : answer.slice(0, newline)).trimEnd()
  if (!first.endsWith(marker)) return answer
  return `${first.slice(0, -marker.length).trimEnd()}${newline === -1 ? '' : answer.slice(newline)}`
}
