import { isDeepStrictEqual } from 'node:util'
import {
  type AssistantMessage,
  joinText,
  joinThinking,
  type StopReason,
  type StreamItem,
  type Usage,
  validateHistoryEvent,
} from '@kode/protocol'
import { ProviderError } from '../transport/errors.js'

/** What a case's final message must hold, where the plugin author knows it. */
export interface CaseExpectations {
  /** The mapped stop reason; `null` means it must be absent (a value Kode has no word for). */
  stopReason?: StopReason | null
  /** The provider's own stop value. */
  rawStopReason?: string
  /** Usage exactly: a count the provider did not report must be absent, never 0. */
  usage?: Usage
  /** All text parts joined. */
  text?: string
  /** The tool calls in order (arguments compared when given). */
  toolCalls?: readonly { name: string; argumentsJson?: string }[]
}

/** How one played stream ended: the items it yielded, and what it threw, if anything. */
export type Outcome = { items: StreamItem[]; error?: unknown }

/** Problems of one finished stream, as sentences; empty when it meets the contract. */
export function streamProblems(items: readonly StreamItem[]): string[] {
  const problems: string[] = []
  const dones = items.filter((item) => item.type === 'done').length
  if (dones !== 1) problems.push(`expected exactly one done item, got ${dones}`)
  if (items.at(-1)?.type !== 'done')
    problems.push(`the last item is ${items.at(-1)?.type ?? 'missing'}, not done`)
  return problems
}

/**
 * Whether the stream items agree with the final message: text and thinking deltas join to the
 * message's text and thinking, one `tool_call_start` per tool call with the same id and name in
 * the same order, one `image_delta` per image part. For a `partial` message (aborted, or carried
 * by an error) the delivered items need only be a prefix of what the message holds.
 */
export function deltaProblems(
  items: readonly StreamItem[],
  message: AssistantMessage,
  partial = message.stopReason === 'aborted',
): string[] {
  const problems: string[] = []
  let text = ''
  let thinking = ''
  const starts: string[] = []
  let images = 0
  for (const item of items) {
    if (item.type === 'text_delta') text += item.text
    else if (item.type === 'thinking_delta') thinking += item.text
    else if (item.type === 'tool_call_start') starts.push(`${item.toolCallId} ${item.toolName}`)
    else if (item.type === 'image_delta') images++
  }
  const agree = (delivered: string, held: string) =>
    partial ? held.startsWith(delivered) : delivered === held
  const heldText = joinText(message.parts)
  const heldThinking = joinThinking(message.parts) ?? ''
  if (!agree(text, heldText))
    problems.push(`text deltas ${quote(text)} do not match the message text ${quote(heldText)}`)
  if (!agree(thinking, heldThinking))
    problems.push(
      `thinking deltas ${quote(thinking)} do not match the message thinking ${quote(heldThinking)}`,
    )
  const calls = message.parts.flatMap((p) => (p.type === 'tool_call' ? [`${p.id} ${p.name}`] : []))
  const callsAgree = partial ? starts.every((s) => calls.includes(s)) : starts.join('\n') === calls.join('\n')
  if (!callsAgree)
    problems.push(
      `tool_call_start items [${starts.join(', ')}] do not match the tool calls [${calls.join(', ')}]`,
    )
  if (new Set(starts).size !== starts.length) problems.push('a tool call was announced more than once')
  const heldImages = message.parts.filter((p) => p.type === 'image_url' || p.type === 'image_file').length
  if (partial ? images > heldImages : images !== heldImages)
    problems.push(`${images} image_delta items for ${heldImages} image parts`)
  return problems
}

/**
 * Kode's usage convention: counts are non-negative integers, `totalTokens` is input plus output,
 * cache counts are parts of the input and reasoning part of the output, and usage with nothing
 * counted is left out rather than sent as an empty object.
 */
export function usageProblems(usage: Usage | undefined): string[] {
  if (usage === undefined) return []
  const problems: string[] = []
  const entries = Object.entries(usage)
  if (entries.length === 0) problems.push('usage is an empty object; leave it out when nothing was reported')
  for (const [key, value] of entries) {
    if (!Number.isInteger(value) || (value as number) < 0)
      problems.push(`usage.${key} is ${value}, not a count`)
  }
  const { inputTokens, outputTokens, totalTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens } = usage
  if (inputTokens !== undefined && outputTokens !== undefined && totalTokens !== inputTokens + outputTokens)
    problems.push(
      `totalTokens ${totalTokens} is not inputTokens + outputTokens (${inputTokens + outputTokens})`,
    )
  const cached = (cacheReadTokens ?? 0) + (cacheWriteTokens ?? 0)
  if (inputTokens !== undefined && cached > inputTokens)
    problems.push(`cache tokens (${cached}) exceed inputTokens (${inputTokens}): input must include them`)
  if (outputTokens !== undefined && reasoningTokens !== undefined && reasoningTokens > outputTokens)
    problems.push(
      `reasoningTokens (${reasoningTokens}) exceed outputTokens (${outputTokens}): output must include them`,
    )
  return problems
}

/** The message is a valid `AssistantMessage` by the protocol schema (it can be persisted). */
export function schemaProblems(message: AssistantMessage): string[] {
  try {
    validateHistoryEvent(message)
    return []
  } catch (error) {
    return [
      `the message does not match the protocol schema: ${error instanceof Error ? error.message : error}`,
    ]
  }
}

/** Where the message differs from what the case expects. */
export function expectationProblems(message: AssistantMessage, expected: CaseExpectations): string[] {
  const problems: string[] = []
  if (expected.stopReason !== undefined && (message.stopReason ?? null) !== expected.stopReason)
    problems.push(
      `stopReason is ${message.stopReason ?? 'absent'}, expected ${expected.stopReason ?? 'absent'}`,
    )
  if (expected.rawStopReason !== undefined && message.rawStopReason !== expected.rawStopReason)
    problems.push(`rawStopReason is ${message.rawStopReason}, expected ${expected.rawStopReason}`)
  if (expected.usage !== undefined && !sameUsage(message.usage, expected.usage))
    problems.push(`usage is ${JSON.stringify(message.usage)}, expected ${JSON.stringify(expected.usage)}`)
  if (expected.text !== undefined && joinText(message.parts) !== expected.text)
    problems.push(`text is ${quote(joinText(message.parts))}, expected ${quote(expected.text)}`)
  if (expected.toolCalls !== undefined) {
    const calls = message.parts.flatMap((p) => (p.type === 'tool_call' ? [p] : []))
    const fits =
      calls.length === expected.toolCalls.length &&
      expected.toolCalls.every(
        (want, i) =>
          calls[i]!.name === want.name &&
          (want.argumentsJson === undefined || calls[i]!.argumentsJson === want.argumentsJson),
      )
    if (!fits)
      problems.push(
        `tool calls are ${JSON.stringify(calls.map((c) => [c.name, c.argumentsJson]))}, expected ${JSON.stringify(expected.toolCalls)}`,
      )
  }
  return problems
}

/** Usage compared with `totalTokens` derived where the expectation leaves it out. */
function sameUsage(actual: Usage | undefined, expected: Usage): boolean {
  if (actual === undefined) return false
  const want: Usage = { ...expected }
  if (want.totalTokens === undefined && want.inputTokens !== undefined && want.outputTokens !== undefined)
    want.totalTokens = want.inputTokens + want.outputTokens
  const keys = new Set([...Object.keys(actual), ...Object.keys(want)]) as Set<keyof Usage>
  for (const key of keys) if (actual[key] !== want[key]) return false
  return true
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)
}

/** The stream ended with a message deep-equal to `expected`. */
export function sameMessage(outcome: Outcome, expected: AssistantMessage, how: string): string[] {
  if (outcome.error !== undefined) return [`${how}: the stream threw ${describe(outcome.error)}`]
  const done = outcome.items.at(-1)
  if (done?.type !== 'done') return [`${how}: no done item`]
  return isDeepStrictEqual(done.message, expected)
    ? []
    : [`${how}: the message differs: ${JSON.stringify(done.message)} vs ${JSON.stringify(expected)}`]
}

/** The stream failed with a `ProviderError` carrying a partial message that agrees with what was delivered. */
export function failsWithPartial(outcome: Outcome, how: string): string[] {
  const error = outcome.error
  if (!ProviderError.is(error))
    return [`${how}: expected a ProviderError, got ${describe(error ?? outcome.items.at(-1)?.type)}`]
  const problems: string[] = []
  if (outcome.items.some((item) => item.type === 'done'))
    problems.push(`${how}: a done item came before the error`)
  const partial = error.partial
  if (!partial) return [...problems, `${how}: the error carries no partial message`]
  if (partial.stopReason !== 'error' || partial.isApiError !== true)
    problems.push(`${how}: the partial message is not marked stopReason error / isApiError`)
  problems.push(...deltaProblems(outcome.items, partial, true).map((p) => `${how}: ${p}`))
  return problems
}

/** A thrown value or an item, in a sentence. */
export function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`
  return typeof value === 'string' ? value : JSON.stringify(value)
}
