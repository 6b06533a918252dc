import { type AssistantMessage, joinText } from '@kode/protocol'
import type { Static, TSchema } from '@sinclair/typebox'
import { createSchemaCheck } from '../schema-check.js'
import { checkAnswer } from './check-answer.js'

/**
 * The structured output a final answer holds, read as a run with `output: schema` reads it (the
 * answer as JSON, else a fenced ```json block in it, else the message's last text part; a value
 * `JSON.parse` would read lossily is none), and valid against `schema`; `undefined` when it holds
 * none. For a host that reads an answer from a stored history rather than from `run.done`, such as
 * one whose process ended before it took the outcome. `answerText` is what the run took as the
 * answer: by default the message's text, as with the native formatter.
 */
export function readStructuredOutput<S extends TSchema>(
  schema: S,
  message: AssistantMessage | undefined,
  answerText?: string,
): Static<S> | undefined {
  if (message === undefined && answerText === undefined) return undefined
  const text = answerText ?? joinText(message?.parts ?? [])
  const check = checkAnswer(createSchemaCheck(schema, 'interpreted'), text, message)
  return check.ok ? check.value : undefined
}
