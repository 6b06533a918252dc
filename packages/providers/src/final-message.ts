import type {
  AssistantMessage,
  AssistantPart,
  ModelPrices,
  ProviderFields,
  StopDetails,
  StopReason,
  ToolCallPart,
  Usage,
} from '@kode/protocol'
// The helpers entry, not the main one: it loads without TypeBox, which keeps importing this package cheap.
import { computeCostUsd } from '@kode/protocol/helpers'

/** How a response ended. */
export type Outcome = 'complete' | 'aborted' | 'error'

/** Who answered and when; stamped on the final message. */
export interface MessageStamps {
  api: string
  provider: string
  model: string
  prices: ModelPrices | undefined
  /** When the request started (ms since epoch): the message's `createdAt`. */
  startedAt: number
  now: () => number
  createId: () => string
}

/** What a response reported besides its parts, as the accumulator kept it. */
export interface Reported {
  responseId: string | undefined
  /** Response fields the same format needs back (see `ResponseBuilder.responseFields`). */
  providerFields: ProviderFields | undefined
  usage: Usage | undefined
  providerCost: number | undefined
  rawStop: string | undefined
  mappedStop: StopReason | undefined
  stopDetails: StopDetails | undefined
}

/**
 * The final message of a response that ended with `outcome`: its parts, the stamps, usage with a
 * total, the cost (the provider's, else computed from the catalog's prices), the stop reason
 * (the wire's when complete; `aborted` or `error` otherwise) and, for an error, its message.
 */
export function finalMessage(
  parts: AssistantPart[],
  reported: Reported,
  stamps: MessageStamps,
  outcome: Outcome,
  errorMessage: string | undefined,
): AssistantMessage {
  const message: AssistantMessage = {
    role: 'assistant',
    id: stamps.createId(),
    createdAt: stamps.startedAt,
    parts,
  }
  const usage = reported.usage && withTotal(reported.usage)
  if (usage) message.usage = usage
  if (outcome === 'complete') {
    if (reported.mappedStop !== undefined) message.stopReason = reported.mappedStop
    if (reported.rawStop !== undefined) message.rawStopReason = reported.rawStop
    if (reported.stopDetails !== undefined) message.stopDetails = reported.stopDetails
  } else {
    message.stopReason = outcome === 'aborted' ? 'aborted' : 'error'
  }
  if (reported.responseId !== undefined) message.responseId = reported.responseId
  if (reported.providerFields !== undefined) message.providerFields = reported.providerFields
  message.model = stamps.model
  message.provider = stamps.provider
  message.api = stamps.api
  const cost =
    reported.providerCost ?? (usage && stamps.prices ? computeCostUsd(usage, stamps.prices) : undefined)
  if (cost !== undefined) message.costUsd = cost
  message.durationMs = Math.max(0, stamps.now() - stamps.startedAt)
  if (outcome === 'error') {
    message.isApiError = true
    if (errorMessage !== undefined) message.errorMessage = errorMessage
  }
  return message
}

/**
 * Gives a call its final id and arguments. Empty arguments of a call the wire closed are `{}`,
 * unless the output limit ended the response (`limit`): a wire that closes the blocks it cut
 * (Anthropic) closes a call the limit cut right after its name with no arguments at all.
 * Arguments that do not parse are `incomplete` only when they were cut (`cut`: the call never
 * closed, or the response was cut by `length`, an abort or a failure). Malformed JSON in a call
 * that closed in a finished response is the model's mistake: it is kept as written, for the tool
 * to report to the model.
 */
export function settleToolCall(
  part: ToolCallPart,
  closed: boolean,
  cut: boolean,
  createId: () => string,
  limit = false,
): void {
  if (!part.id) part.id = `call_${createId()}`
  if (closed && !limit && part.argumentsJson.trim() === '') part.argumentsJson = '{}'
  else if ((cut || !closed) && !isJson(part.argumentsJson)) part.incomplete = true
}

function withTotal(usage: Usage): Usage {
  if (usage.inputTokens === undefined || usage.outputTokens === undefined) return usage
  return { ...usage, totalTokens: usage.inputTokens + usage.outputTokens }
}

function isJson(text: string): boolean {
  if (text.trim() === '') return false
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}
