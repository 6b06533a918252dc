import { type AssistantMessage, joinText } from '@kode/protocol'
import type { Static, TSchema } from '@sinclair/typebox'
import { jsonHazard } from '../json-hazards.js'
import type { SchemaCheck } from '../schema-check.js'
import { fencedJson } from './fenced-json.js'

/** What the final answer's text held: a value valid against the schema, or why not. */
export type AnswerCheck<S extends TSchema = TSchema> =
  | { ok: true; value: Static<S> }
  | { ok: false; problems: string[] }

/** The most validation errors a corrective message or an error reason lists. */
const MAX_PROBLEMS = 10

/**
 * Reads the final answer as JSON and validates it with the output schema's `check` (an
 * interpreted one, which needs no code generation, so it runs under a strict Content Security
 * Policy too; a string format no checker is registered for is an annotation). The text tried is
 * the answer (`answerText`), then, if it is not JSON, a fenced ```json block in it, then the
 * message's last text part (an answer after a preamble).
 */
export function checkAnswer<S extends TSchema>(
  check: SchemaCheck<S>,
  answerText: string,
  message: AssistantMessage | undefined,
): AnswerCheck<S> {
  const parsed = parseAnswer(answerText, message)
  if (!parsed.ok) return { ok: false, problems: [parsed.problem] }
  const value = parsed.value
  if (check.check(value)) return { ok: true, value }
  const problems: string[] = []
  for (const error of check.errors(value)) {
    if (problems.length === MAX_PROBLEMS) break
    problems.push(`${error.path === '' ? '(root)' : error.path}: ${error.message}`)
  }
  return { ok: false, problems }
}

function parseAnswer(
  answerText: string,
  message: AssistantMessage | undefined,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  const candidates = [answerText]
  const fenced = fencedJson(answerText)
  if (fenced !== undefined) candidates.push(fenced)
  const parts = message?.parts.filter((part) => part.type === 'text') ?? []
  if (parts.length > 1) candidates.push(joinText([parts[parts.length - 1]!]))
  for (const text of candidates) {
    if (text.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      continue
    }
    // What JSON.parse reads lossily or ambiguously (an integer beyond 2^53, a repeated key, a
    // `__proto__` key) would reach the host changed, or differently from what the model meant, as
    // for tool arguments: the model is told, and may send it again.
    const hazard = jsonHazard(text)
    return hazard === undefined ? { ok: true, value } : { ok: false, problem: hazard }
  }
  return {
    ok: false,
    problem: answerText.trim() === '' ? 'the answer is empty, not a JSON object' : 'the answer is not JSON',
  }
}

const CORRECTION_HEAD = 'Your final answer does not match the required JSON schema:'
const CORRECTION_TAIL = 'Answer again with only a JSON object that is valid against the schema.'

/** The user message of the one corrective turn: what was wrong, and what to send instead. */
export function correctionText(problems: readonly string[]): string {
  return [CORRECTION_HEAD, ...problems.map((problem) => `- ${problem}`), CORRECTION_TAIL].join('\n')
}

/** Whether `text` is the message of a corrective turn (see {@link correctionText}). */
export function isCorrectionText(text: string): boolean {
  return text.startsWith(`${CORRECTION_HEAD}\n`) && text.endsWith(`\n${CORRECTION_TAIL}`)
}

/** The error reason of a task whose answer did not validate after the corrective turn. */
export function invalidAnswerMessage(problems: readonly string[]): string {
  return `The final answer is not valid against the output schema after a corrective turn: ${problems.join('; ')}`
}

/** Why the answer failed, for a task that stopped at `maxTurns` with no turn left to correct it. */
export function uncorrectedAnswerReason(problems: readonly string[]): string {
  return `its answer is not valid against the output schema, and no turn was left to correct it: ${problems.join('; ')}`
}
