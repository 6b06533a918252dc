import { parseCodeBlocks } from './code-blocks.js'
import type { ParsedAction } from './history-formatter.js'
import { jsonObjectEnd } from './json-object.js'
import { answerAfter, type LabelLine, labelsOutside, ownTextEnd, scanLabels } from './labels.js'

/** What one ReAct response says: an action to take, a final answer, or neither (plain text). */
export interface ReActStep {
  action?: ParsedAction
  answer?: string
}

/**
 * Reads a ReAct response: the first `Action:` or `Final Answer:` line decides which it is, and
 * anything from an `Observation:` line on is ignored (the model imagining the result); lines
 * inside a fenced code block are not labels (labels may be in bold, and `Action Input:` is
 * `Args:`). An action is the tool name on the `Action:` line and the JSON object after its own
 * `Args:` (before any later `Action:` line; on one line or several, indented or not, optionally
 * in a code fence); without `Args:` it has no arguments. `cut` means the text
 * ended early (an interrupt, or `length`): an action whose name line or arguments did not finish
 * is then dropped or `incomplete`. Arguments that are not a JSON object are passed on as written,
 * so the tool reports them to the model.
 */
export function parseReAct(text: string, cut: boolean): ReActStep {
  // A label inside a code block is something the model shows (an example, a quote), not a step it
  // takes, as in CodeAct.
  const labels = labelsOutside(scanLabels(text), parseCodeBlocks(text))
  const end = ownTextEnd(text, labels)
  const first = labels.find(
    (line) => line.start < end && (line.label === 'action' || line.label === 'final answer'),
  )
  if (!first) return {}
  if (first.label === 'final answer') return { answer: answerAfter(text, first, end) }

  const newline = text.indexOf('\n', first.valueStart)
  const nameEnd = newline === -1 || newline > end ? end : newline
  // The name line of a cut response may itself be cut.
  if (cut && nameEnd === text.length) return {}
  const name = toolName(text.slice(first.valueStart, nameEnd))
  if (name === '') return {}
  // The action's own `Args:` line: before any later action or answer, whose arguments they would be.
  const next = labels.find(
    (line) => line.start > first.start && (line.label === 'action' || line.label === 'final answer'),
  )
  const argsEnd = Math.min(end, next?.start ?? end)
  const args = labels.find(
    (line) => line.label === 'args' && line.start > first.start && line.start < argsEnd,
  )
  const { argumentsJson, closed } = args
    ? argumentsAfter(text, args, argsEnd)
    : { argumentsJson: '', closed: false }
  const action: ParsedAction = { name, argumentsJson }
  // In a cut response, only arguments whose JSON object closed are complete.
  if (cut && !closed) action.incomplete = true
  return { action }
}

/** The tool name as written, without the backticks or quotes models sometimes put around it. */
function toolName(line: string): string {
  return line.trim().replace(/^[`'"*]+|[`'"*]+$/g, '')
}

/** The arguments after `Args:`: the JSON object when one starts there, else the line as written. */
function argumentsAfter(
  text: string,
  args: LabelLine,
  end: number,
): { argumentsJson: string; closed: boolean } {
  let value = text.slice(args.valueStart, end).trimStart()
  // Arguments in a code fence (```json ... ```): read what is inside, from its first character
  // that is not blank, since an indented fence (up to three spaces) has its lines indented too.
  const fence = /^(`{3,}|~{3,})[^\n]*\n/.exec(value)
  if (fence) value = value.slice(fence[0].length).trimStart()
  if (!value.startsWith('{')) return { argumentsJson: value.split('\n', 1)[0]!.trim(), closed: false }
  const close = jsonObjectEnd(value, 0)
  if (close === -1) return { argumentsJson: value.trimEnd(), closed: false }
  return { argumentsJson: value.slice(0, close), closed: true }
}
