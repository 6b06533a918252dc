/** The line labels of the text formats (ReAct's `Thought:` / `Action:` / `Args:`, `Final Answer:`). */
export type Label = 'thought' | 'action' | 'args' | 'final answer' | 'observation'

/** A labelled line: where the line starts and where the text after `Label:` starts. */
export interface LabelLine {
  label: Label
  /** Offset of the line's first character. */
  start: number
  /** Offset of the value, after the colon and the spaces that follow it. */
  valueStart: number
}

// A label starts a line (after optional spaces), case-insensitively.
const LABEL_LINE = /^[ \t]*(thought|action|args|final answer|observation)[ \t]*:[ \t]*/gim

/** Every labelled line of `text`, in order. */
export function scanLabels(text: string): LabelLine[] {
  const lines: LabelLine[] = []
  for (const match of text.matchAll(LABEL_LINE)) {
    lines.push({
      label: match[1]!.toLowerCase() as Label,
      start: match.index,
      valueStart: match.index + match[0].length,
    })
  }
  return lines
}

/**
 * Where the model's own part of a response ends: at the first `Observation:` line, since anything
 * after it is the model imagining a tool's result (the real one comes from the tool).
 */
export function ownTextEnd(text: string, labels: readonly LabelLine[]): number {
  return labels.find((line) => line.label === 'observation')?.start ?? text.length
}

/** The text after a `Final Answer:` label, up to `end`, trimmed. */
export function answerAfter(text: string, line: LabelLine, end: number): string {
  return text.slice(line.valueStart, end).trim()
}
