import {
  type AssistantMessage,
  type AssistantPart,
  joinText,
  type ToolCallPart,
  type ToolDefinition,
  type ToolResultMessage,
  type UserMessage,
} from '@kode/protocol'
import { isToolName } from '../tool-name.js'
import {
  actionCallId,
  type FormatterInstructions,
  type HistoryFormatter,
  type ParsedAction,
} from './history-formatter.js'

/**
 * How a text strategy sends past actions: `tool_calls` as the provider's tool calls and tool
 * results (the history as persisted), `text` as the model wrote them, each result as a user
 * message `Observation: ...` (for models or servers that reject tool messages), `auto` as tool
 * calls when the requests declare native tools and as text when they declare none (Anthropic, for
 * one, rejects tool calls in a request without tools).
 */
export type ActionHistory = 'auto' | 'tool_calls' | 'text'

/** What a text response says, as a text strategy reads it. */
export interface TextReading {
  actions: ParsedAction[]
  /** The final answer, when the response gives one. */
  answer?: string
}

/** What sets one text strategy (ReAct, CodeAct) apart; the rest is shared. */
export interface TextActionFormat {
  name: string
  instructions(tools: readonly ToolDefinition[]): FormatterInstructions
  /** Reads a response's text; `cut` when it ended early (an interrupt, or `length`). */
  read(text: string, cut: boolean): TextReading
  needsPendingPlaceholder(action: ParsedAction): boolean
  /** Whether calls of this tool are the format's actions (the others stay native tool calls). */
  owns(toolName: string): boolean
  /** A call whose text the message does not hold (made natively), written as the format writes actions. */
  render(call: ToolCallPart): string
}

/**
 * A formatter for a strategy whose model states actions in text: the actions are read from the
 * response's text, and past actions are sent back as `history` says. Even with `tool_calls`, a
 * call named as no provider accepts (`read file`) goes back as text, with its result as an
 * observation, so one malformed action cannot make every later request invalid.
 */
export function textActionFormatter(format: TextActionFormat, history: ActionHistory): HistoryFormatter {
  const read = (message: AssistantMessage) =>
    format.read(joinText(message.parts), message.stopReason === 'aborted' || message.stopReason === 'length')
  const callsAsText = (instructions: FormatterInstructions | undefined) =>
    history === 'text' || (history === 'auto' && !(instructions?.tools && instructions.tools.length > 0))
  const asText = (toolName: string, instructions: FormatterInstructions | undefined) =>
    format.owns(toolName) && (callsAsText(instructions) || !isToolName(toolName))
  return {
    name: format.name,
    instructions: (tools) => format.instructions(tools),
    parseActions: (message) => read(message).actions,
    needsPendingPlaceholder: (action) => format.needsPendingPlaceholder(action),
    answerText: (message) => read(message).answer ?? joinText(message.parts),
    isAction: (message) => message.parts.some((part) => part.type === 'tool_call' && format.owns(part.name)),
    formatAction: (message, instructions) => {
      const textual = (toolName: string) => asText(toolName, instructions)
      return message.parts.some((part) => part.type === 'tool_call' && textual(part.name))
        ? actionAsText(message, textual, format.render)
        : message
    },
    formatResult: (result, instructions) =>
      asText(result.toolName, instructions) ? observation(result) : result,
  }
}

/**
 * An action turn with the calls `asText` picks as text: those calls are dropped, since the text
 * already states them; a call the text does not state (its id is not the one derived from the
 * text) is written out with `render`.
 */
function actionAsText(
  message: AssistantMessage,
  asText: (toolName: string) => boolean,
  render: (call: ToolCallPart) => string,
): AssistantMessage {
  const parts: AssistantPart[] = []
  const written: string[] = []
  let index = 0
  for (const part of message.parts) {
    if (part.type !== 'tool_call') {
      parts.push(part)
      continue
    }
    const callIndex = index++
    if (!asText(part.name)) parts.push(part)
    else if (part.id !== actionCallId(message.id, callIndex)) written.push(render(part))
  }
  if (written.length > 0) {
    const lead = joinText(message.parts) === '' ? '' : '\n\n'
    parts.push({ type: 'text', text: lead + written.join('\n\n') })
  }
  return { ...message, parts }
}

/** A tool result as the user message `Observation: <output>` (its images kept). */
export function observation(result: ToolResultMessage): UserMessage {
  const label = result.status === 'success' ? 'Observation' : `Observation (${result.status})`
  const output = result.outputText === '' ? '(no output)' : result.outputText
  return {
    role: 'user',
    id: result.id,
    createdAt: result.createdAt,
    parts: [{ type: 'text', text: `${label}: ${output}` }, ...result.parts],
  }
}
