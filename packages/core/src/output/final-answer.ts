import { type AssistantMessage, cutText, type HistoryEvent, isRefusal, joinText } from '@kode/protocol'
import { checkAnswer, correctionText, invalidAnswerMessage, isCorrectionText } from './check-answer.js'
import type { OutputSpec } from './output-spec.js'

/** What to do with a task's final answer when a structured output was asked for. */
export type AnswerVerdict =
  /** It is valid: the task completes with it. */
  | { kind: 'accepted' }
  /**
   * It is not, for the first time: send this user message and let the model answer again.
   * `problems`: what is wrong with it, for a task that has no turn left to correct it.
   */
  | { kind: 'correct'; text: string; problems: string[] }
  /** It is not, after the corrective turn: the task ends with this reason. */
  | { kind: 'invalid'; message: string }

/**
 * The structured final answer of one task: judges each final answer against the schema, allows
 * one corrective turn, and holds the value once one validates. Never holds an unvalidated value.
 */
export class FinalAnswer {
  readonly spec: OutputSpec
  #corrected = false
  #accepted = false
  #value: unknown

  /**
   * `corrected`: the task sent its corrective turn already (before it paused, or in a process that
   * died: see `correctionSent`).
   */
  constructor(spec: OutputSpec, corrected = false) {
    this.spec = spec
    this.#corrected = corrected
  }

  /** Whether an answer validated (`task_finish.hasStructuredOutput`). */
  get accepted(): boolean {
    return this.#accepted
  }

  /** The validated answer; `undefined` until one validates. */
  get value(): unknown {
    return this.#value
  }

  /** Judges the task's final answer: its text, and the last assistant message of `history`. */
  judge(answerText: string, history: readonly HistoryEvent[]): AnswerVerdict {
    const last = lastAssistant(history)
    const check = checkAnswer(this.spec.check, answerText, last)
    if (check.ok) {
      this.#accepted = true
      this.#value = check.value
      return { kind: 'accepted' }
    }
    // A refusal is no malformed answer: a turn asking again for the schema would be spent on it.
    const refusal = last && refusalOf(last)
    if (refusal !== undefined) return { kind: 'invalid', message: refusal }
    if (this.#corrected) return { kind: 'invalid', message: invalidAnswerMessage(check.problems) }
    this.#corrected = true
    return { kind: 'correct', text: correctionText(check.problems), problems: check.problems }
  }
}

/**
 * Why the answer is a refusal, when the provider marked it one (an OpenAI refusal's `stopDetails`,
 * Anthropic's `refusal` stop), in the provider's or the model's words; `undefined` otherwise.
 */
function refusalOf(message: AssistantMessage): string | undefined {
  if (!isRefusal(message)) return undefined
  const said = message.stopDetails?.explanation ?? joinText(message.parts)
  return `The model refused to answer${said.trim() ? `: ${cutText(said.trim(), 500)}` : '.'}`
}

/**
 * Whether `records` (those of the task being carried on) hold its corrective message: a task
 * carried on after its process died, or after it paused for approval, gets no second one.
 */
export function correctionSent(records: readonly HistoryEvent[]): boolean {
  return records.some(
    (record) => 'role' in record && record.role === 'user' && isCorrectionText(joinText(record.parts)),
  )
}

function lastAssistant(history: readonly HistoryEvent[]): AssistantMessage | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const record = history[i]!
    if ('role' in record && record.role === 'assistant') return record
  }
  return undefined
}
