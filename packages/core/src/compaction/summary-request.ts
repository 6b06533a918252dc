import {
  type AssistantMessage,
  isRefusal,
  joinText,
  type Message,
  serverToolsOf,
  toolCallsOf,
} from '@kode/protocol'
import { modeBlock } from '@kode/protocol/helpers'
import type { LLMRequest } from '@kode/providers'
import type { TokenEstimator } from './estimate.js'
import { serverToolText } from './server-tool-text.js'

/**
 * The system prompt of the engine's summary request. The model gets the older part of the
 * conversation as a transcript (and the previous summary, if any) and answers with the summary
 * that replaces it.
 */
export const COMPACTION_PROMPT = `You are summarising the earlier part of a conversation between a user and an AI agent that works with tools, so that the agent can carry on with only your summary and the most recent messages.

Keep what the agent needs to continue:
- the user's goals, requests and constraints (quote them where the wording matters);
- decisions taken and why;
- what was done: files read or changed, commands run, and the results that still matter (paths, names, numbers, errors);
- the current state of the work and what remains to do.

Leave out pleasantries and tool output that no longer matters. Fold the previous summary, if there is one, into yours. Write concise notes in the language of the conversation. Answer with the summary only; do not call tools.`

/** How much of one message's text the transcript quotes: long tool output is cut in the middle. */
const MAX_MESSAGE_CHARS = 4_000
/** What an image in the summarised part becomes: images are dropped, with this note. */
export const IMAGE_NOTE = '[image omitted from the summary]'

/**
 * The transcript of the summarised messages: one block per message, a user message's mode first
 * (as the model read it, see `modeBlock`), thinking left out, images replaced by
 * {@link IMAGE_NOTE}, the provider's own tools written out (see `serverToolText`), long text cut in
 * the middle. When it exceeds `maxTokens` the oldest blocks give way to a note saying how many
 * were omitted.
 */
export function transcriptOf(
  messages: readonly Message[],
  maxTokens: number,
  estimator: TokenEstimator,
): string {
  const blocks = messages.map(block)
  let tokens = 0
  let from = blocks.length
  while (from > 0) {
    const next = estimator.text(blocks[from - 1]!)
    if (tokens + next > maxTokens) break
    tokens += next
    from--
  }
  const kept = blocks.slice(from)
  if (from > 0) kept.unshift(`[${from} earlier message${from === 1 ? '' : 's'} omitted: they did not fit]`)
  return kept.join('\n\n')
}

/** The engine's summary request: the documented prompt, the previous summary and the transcript. */
export function summaryRequest(
  transcript: string,
  previousSummary: string | undefined,
  maxOutputTokens: number | undefined,
): LLMRequest {
  const previous =
    previousSummary === undefined ? '' : `<previous-summary>\n${previousSummary}\n</previous-summary>\n\n`
  const text = `${previous}<conversation>\n${transcript}\n</conversation>\n\nWrite the summary now.`
  const request: LLMRequest = {
    system: COMPACTION_PROMPT,
    messages: [{ role: 'user', id: 'compaction-request', createdAt: 0, parts: [{ type: 'text', text }] }],
  }
  if (maxOutputTokens !== undefined) request.maxOutputTokens = maxOutputTokens
  return request
}

function block(message: Message): string {
  switch (message.role) {
    case 'system':
      return `System: ${cut(joinText(message.parts))}`
    case 'developer':
      return `Developer note: ${cut(joinText(message.parts))}`
    case 'user': {
      // The model read the mode (and its context: instructions, often) before the text.
      const mode = message.mode === undefined ? '' : `${modeBlock(message.mode, message.modeContext)}\n`
      return `User: ${cut(mode + joinText(message.parts))}${imageNotes(message.parts)}`
    }
    case 'assistant': {
      const calls = toolCallsOf(message).map((call) => `\nCalled ${call.name} ${cut(call.argumentsJson)}`)
      const served = (serverToolsOf(message.parts) ?? []).map((part) => `\n${cut(serverToolText(part))}`)
      return `Assistant: ${cut(joinText(message.parts))}${served.join('')}${calls.join('')}${imageNotes(message.parts)}${refusalNote(message)}`
    }
    case 'tool':
      return `Result of ${message.toolName} (${message.status}): ${cut(message.outputText)}${imageNotes(message.parts)}`
    default: {
      const unknown: never = message
      return String(unknown)
    }
  }
}

/** A refusal said as one (it may hold no text at all), with the provider's explanation. */
function refusalNote(message: AssistantMessage): string {
  if (!isRefusal(message)) return ''
  const explanation = message.stopDetails?.explanation?.trim()
  return `\n(The model refused to answer${explanation ? `: ${cut(explanation)}` : '.'})`
}

function imageNotes(parts: readonly { type: string }[]): string {
  const images = parts.filter((part) => part.type === 'image_url' || part.type === 'image_file').length
  return images === 0 ? '' : ` ${Array.from({ length: images }, () => IMAGE_NOTE).join(' ')}`
}

function cut(text: string): string {
  if (text.length <= MAX_MESSAGE_CHARS) return text
  const half = MAX_MESSAGE_CHARS / 2
  return `${text.slice(0, half)}\n[… ${text.length - MAX_MESSAGE_CHARS} characters omitted …]\n${text.slice(-half)}`
}
